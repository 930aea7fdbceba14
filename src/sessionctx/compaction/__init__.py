"""Compaction: plan a cut, summarize what lies before it, audit the summary, append a checkpoint.

Data flows one way: a built context -> a plan -> a prompt -> a summary -> an audit -> a
checkpoint record appended to its target only if the session did not move meanwhile.
"""

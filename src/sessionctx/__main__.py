from sessionctx.cli import run

run()

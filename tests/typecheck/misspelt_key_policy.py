"""Must FAIL mypy: a policy pass over the turns reading a result's key misspelt ("isEror").

Excluded from the normal mypy run (pyproject.toml); `tests/typecheck/expect.py` runs mypy on
this file and succeeds only when mypy rejects exactly this key with `typeddict-item`, which
shows that mypy checks the keys the passes read from a turn's blocks, not only the renderers.
"""

from sessionctx.changes import ChangeKind
from sessionctx.providers.policies.turns import RESULT, Prepared


def log_failed_results(prep: Prepared) -> None:
    for _, blocks, index in prep.turns:
        for block in blocks:
            if block["type"] == RESULT and block["isEror"]:
                prep.log(ChangeKind.ERROR_AS_TEXT, "a failed result", index, id=block["id"])

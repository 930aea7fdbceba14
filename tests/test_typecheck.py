"""mypy --strict checks the keys a renderer reads from a turn's blocks: a misspelt key fails."""

from tests.typecheck.expect import problem


def test_mypy_rejects_a_misspelt_block_key():
    assert problem() is None

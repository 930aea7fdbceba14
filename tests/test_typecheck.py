"""mypy --strict checks the keys the renderers and the policy passes read from a turn's blocks:
a misspelt key fails."""

import pytest

from tests.typecheck.expect import CASES, problems


@pytest.fixture(scope="module")
def found() -> dict[str, str]:
    return problems()


@pytest.mark.parametrize("name", [path.name for path in CASES])
def test_mypy_rejects_a_misspelt_block_key(found: dict[str, str], name: str) -> None:
    assert name not in found, found[name]

"""Names a package exports but imports only when first used, so start-up loads only what a
command runs."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def attributes(package: str, homes: dict[str, str],
               namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: each name of `homes` is taken from its module
    (relative to the package) on first use and kept in `namespace` (the package's globals)."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    return __getattr__

"""Provider request bodies: a built context turned into what one API accepts, and a validator.

`request` builds and validates bodies, `policies/` is the provider step, `capabilities` the
table of what each provider and model accepts, `registry` each provider's renderer and
validator. The names below are imported when first used, so a command that renders for no
provider does not load them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sessionctx.providers.capabilities import PROVIDERS
    from sessionctx.providers.request import (
        BuildRequestOptions,
        Request,
        build_from_messages,
        build_request,
        naive_request,
        validate,
    )
    from sessionctx.providers.violations import Violation

_HOMES = {"PROVIDERS": "capabilities", "Violation": "violations",
          **{name: "request" for name in ("BuildRequestOptions", "Request",
                                          "build_from_messages", "build_request",
                                          "naive_request", "validate")}}

__all__ = ["PROVIDERS", "BuildRequestOptions", "Request", "Violation", "build_from_messages",
           "build_request", "naive_request", "validate"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'sessionctx.providers' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"sessionctx.providers.{home}"), name)
    globals()[name] = value
    return value

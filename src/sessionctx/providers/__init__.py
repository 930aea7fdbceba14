"""Provider request bodies: a built context turned into what one API accepts, and a validator.

`request` builds and validates bodies, `policies/` is the provider step, `capabilities` the
table of what each provider and model accepts, `registry` each provider's renderer and
validator. The names below are imported when first used, so a command that renders for no
provider does not load them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessionctx.lazy import attributes

if TYPE_CHECKING:
    from sessionctx.providers.registry import PROVIDERS
    from sessionctx.providers.request import (
        BuildRequestOptions,
        Request,
        build_from_messages,
        build_request,
        naive_request,
        validate,
    )
    from sessionctx.providers.tools import CalledTool, Tool, ToolsError
    from sessionctx.providers.violations import Violation

_HOMES = {"PROVIDERS": "registry", "Violation": "violations", "CalledTool": "tools",
          "Tool": "tools", "ToolsError": "tools",
          **{name: "request" for name in ("BuildRequestOptions", "Request",
                                          "build_from_messages", "build_request",
                                          "naive_request", "validate")}}

__all__ = ["PROVIDERS", "BuildRequestOptions", "CalledTool", "Request", "Tool", "ToolsError",
           "Violation", "build_from_messages", "build_request", "naive_request", "validate"]


__getattr__ = attributes(__name__, _HOMES, globals())

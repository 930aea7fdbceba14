"""`sessionctx proxy`: an HTTP server in front of the providers that forwards a valid request
as its own bytes and repairs one the provider would refuse, with `providers.wire.repair_request`.

- `routes`: which API a request speaks, where it goes, which headers pass (no aiohttp).
- `reactive`: the provider refusals a repair can answer, and how.
- `audit`: what was repaired, kept in a sessionctx store (`sessionctx proxy log`).
- `known`: the valid bodies seen, so a repeat or a body with new turns is checked where new.
- `server`: the aiohttp application (needs the `sessionctx[proxy]` extra, imported lazily).
- `child`: `sessionctx run`, a command started with its base URLs pointed at the proxy.
"""

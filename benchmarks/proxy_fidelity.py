"""Byte fidelity of `sessionctx proxy` at length: N generated valid requests per API (default
1,000), each in its own byte spelling, JSON and SSE answers, through the proxy to a strict stub;
every request must reach the stub as the same bytes and every answer come back as the same
bytes. Prints the count per API; exits 1 on the first difference.

Run: .venv/bin/python benchmarks/proxy_fidelity.py [count]
"""

from __future__ import annotations

import http.client
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: tests/

from tests.proxy_fidelity import PATHS, check_one
from tests.proxy_thread import running_proxy
from tests.strict_stub import serve


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with serve() as up, running_proxy(up.url) as proxy:
        host, port = proxy.url.removeprefix("http://").split(":")
        for api in PATHS:
            conn = http.client.HTTPConnection(host, int(port), timeout=60)
            start = time.perf_counter()
            try:
                for seed in range(count):
                    check_one(proxy.url, up, api, seed, conn)
            except AssertionError as exc:
                print(f"{api}: a difference: {exc}")
                return 1
            finally:
                conn.close()
            print(f"{api}: {count} valid requests and their answers byte-identical "
                  f"({time.perf_counter() - start:.1f} s)")
        if proxy.totals.repaired or up.refused():
            print(f"repaired {proxy.totals.repaired}, refused {len(up.refused())}: expected none")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

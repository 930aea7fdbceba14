"""Generated valid requests of each API, in many byte spellings, pass through the proxy byte
for byte both ways (benchmarks/proxy_fidelity.py runs 1,000 per API)."""

from __future__ import annotations

import http.client

import pytest

from tests.proxy_fidelity import PATHS, check_one
from tests.proxy_thread import running_proxy
from tests.strict_stub import serve


@pytest.mark.parametrize("api", list(PATHS))
def test_generated_valid_requests_and_their_answers_pass_byte_for_byte(api):
    with serve() as up, running_proxy(up.url) as proxy:
        host, port = proxy.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        try:
            for seed in range(40):
                check_one(proxy.url, up, api, seed, conn)
        finally:
            conn.close()
        assert proxy.totals.repaired == 0 and not up.refused()

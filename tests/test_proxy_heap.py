"""The proxy keeps the memory one request's body freed for the next one's (proxy/heap.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# a body joined from its chunks, 50 times over, in a process where the proxy has started:
# the page faults each body costs
FAULTS = textwrap.dedent("""
    import os, resource
    from tests.proxy_thread import running_proxy

    def faults():
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

    def body():
        chunks = [os.urandom(1) * 262144 for _ in range(4)]
        return b"".join(chunks)

    with running_proxy("http://127.0.0.1:9"):
        body()
        before = faults()
        for _ in range(50):
            body()
        print((faults() - before) / 50)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux") or
                    os.confstr("CS_GNU_LIBC_VERSION") is None, reason="glibc's heap")
def test_a_body_freed_leaves_its_pages_for_the_next_one() -> None:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    out = subprocess.run([sys.executable, "-c", FAULTS], env=env, capture_output=True,
                         text=True, timeout=60, check=True)
    # glibc's defaults map and unmap each 1 MB body: 256 faults or more a body
    assert float(out.stdout.split()[-1]) < 16

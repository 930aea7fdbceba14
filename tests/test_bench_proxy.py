"""The proxy benchmark's bodies are the sizes it names, in the bytes it sends, and its
percentiles are nearest ranks of the samples it counts."""

from __future__ import annotations

import json

import pytest

from benchmarks.bench_proxy import _pct, _rank, body, fresh, growing, growing_responses


@pytest.mark.parametrize("size", [10_000, 1_000_000])
def test_a_body_is_its_size_in_bytes_sent(size):
    for data in (body(size, False), body(size, True), next(growing(size, 1)),
                 next(growing_responses(size, 1)), next(fresh(size, 1, "x"))):
        assert size <= len(data) < size * 1.01 + 2_000  # a turn or a step more at most
        json.loads(data)


def test_p99_of_200_samples_is_the_third_largest_and_of_10_the_largest():
    samples = [float(n) for n in range(200, 0, -1)]
    assert _rank(200, .99) == 198 and _pct(samples, .99) == 198.0
    assert _pct(samples, .5) == 100.0
    assert _pct(samples[:10], .99) == 200.0

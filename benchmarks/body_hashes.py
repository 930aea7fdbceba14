"""One hash of every request body and change log the provider step makes, to show that a change
made for speed changes neither: run it before and after, and compare the two lines.

Run: .venv/bin/python benchmarks/body_hashes.py [generated histories (300)] [--each FILE]

The inputs are every readable fixture, the bundled example, the synthetic sessions of
bench_providers.py (with and without repairs) and generated histories (the strategies of the
provider property tests, drawn the same way every run), each built for every provider, a few
models and option sets, from the built context and from the raw messages. `--each FILE`
writes the hash of each input as JSON, to find the one that moved.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the package
from benchmarks.bench_providers import synthetic
from sessionctx.context import Context, build_context
from sessionctx.inputs import read_input
from sessionctx.providers import (
    PROVIDERS,
    BuildRequestOptions,
    Request,
    build_from_messages,
    build_request,
    naive_request,
)
from sessionctx.providers.policies.request_settings import RequestError
from tests.conftest import FIXTURES, ROOT, recs
from tests.test_providers_property import history
from tests.test_providers_request_property import request_history

OPTIONS = (BuildRequestOptions(), BuildRequestOptions(thinking_as_text=True),
           BuildRequestOptions(tools_as_text=True), BuildRequestOptions(placeholder_tools=True),
           BuildRequestOptions(thinking=True), BuildRequestOptions(thinking=False, prefill="ok"))
MODELS: dict[str, tuple[str | None, ...]] = {
    "anthropic": (None, "claude-opus-4-8"), "openai-chat": (None,),
    "openai-responses": (None, "gpt-5.1"), "gemini": (None, "gemini-3-pro"),
    "bedrock": (None, "anthropic.claude-opus-4-8")}


def encoded(request: Request) -> bytes:
    body = json.dumps(request.body, ensure_ascii=False, default=repr)
    changes = repr([(c.kind, c.reason, c.record, c.message_index, c.detail)
                    for c in request.changes])
    return "\0".join((body, changes, repr(request.undefined_calls))).encode(
        "utf-8", "surrogatepass")


def digest(context: Context | None, messages: list[dict[str, Any]]) -> str:
    """The hash of every body built from `context` (or, without one, from `messages`)."""
    h = hashlib.sha256()
    for provider in PROVIDERS:
        for model in MODELS[provider]:
            for options in OPTIONS:
                try:
                    request = build_request(context, provider, model, options=options) \
                        if context is not None else \
                        build_from_messages(messages, None, provider, model, options=options)
                except RequestError as exc:
                    h.update(f"refused: {exc}".encode())
                    continue
                h.update(encoded(request))
        if context is not None:
            h.update(encoded(naive_request(context.messages, provider)))
    return h.hexdigest()


def hashes(generated: int) -> dict[str, str]:
    out: dict[str, str] = {}
    paths = [p for p in sorted(FIXTURES.rglob("*")) if p.is_file()
             and not p.name.startswith(("LICENSE", "SOURCES"))]
    for path in [*paths, ROOT / "examples" / "interrupted.jsonl"]:
        read = read_input(str(path))
        if not read.fatal and read.records:
            out[str(path.relative_to(ROOT))] = digest(build_context(read.records), [])
    for n in (200, 201, 203):
        for repairs in (True, False):
            out[f"synthetic {n} {repairs}"] = digest(build_context(synthetic(n, repairs)), [])

    @settings(max_examples=generated, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.one_of(history(), request_history()))
    def each(messages: list[dict[str, Any]]) -> None:
        k = len(out)
        out[f"generated {k}"] = digest(build_context(recs(*messages)), [])
        out[f"generated {k} raw"] = digest(None, messages)

    each()
    return out


def main() -> None:
    args = sys.argv[1:]
    each = args[args.index("--each") + 1] if "--each" in args else None
    counts = [a for a in args if a.isdigit()]
    found = hashes(int(counts[0]) if counts else 300)
    total = hashlib.sha256("".join(found.values()).encode()).hexdigest()
    print(f"{total}  ({len(found)} inputs)")
    if each is not None:
        Path(each).write_text(json.dumps(found, indent=0))


if __name__ == "__main__":
    main()

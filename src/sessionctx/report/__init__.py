"""`sessionctx report`: one self-contained HTML page that shows a session three ways — what was
stored, what a person sees, what reaches the model — with every change and its reason."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sessionctx.context import Context
from sessionctx.gcpause import paused_gc
from sessionctx.records import Problem, Record
from sessionctx.report.model import Page, header, page_model
from sessionctx.report.page import render, render_parts
from sessionctx.report.turns import turns_of_messages

__all__ = ["Page", "page_model", "render", "report_page", "report_parts"]


def report_page(records: Sequence[Record], ctx: Context, *, label: str,
                fmt: str | None = None, problems: Iterable[Problem] = (),
                off_branch: Iterable[Record] = (), body: dict[str, Any] | None = None,
                provider: dict[str, Any] | None = None) -> bytes:
    """`report_parts` joined: the page's UTF-8 bytes."""
    return b"".join(report_parts(records, ctx, label=label, fmt=fmt, problems=problems,
                                 off_branch=off_branch, body=body, provider=provider))


def report_parts(records: Sequence[Record], ctx: Context, *, label: str,
                 fmt: str | None = None, problems: Iterable[Problem] = (),
                 off_branch: Iterable[Record] = (), body: dict[str, Any] | None = None,
                 provider: dict[str, Any] | None = None) -> list[bytes]:
    """The page for a session already read and built; with a provider `body` built from `ctx`,
    a fourth column shows the body's turn each record went into (`provider`: its name, model
    and the validator's violations, listed in the header). Pure: the page's UTF-8 bytes in
    the pieces they are written in (a file is written piece by piece), nothing written."""
    with paused_gc():  # the rows are a large acyclic tree over the records, like a context
        page = page_model(records, ctx, problems=problems, off_branch=off_branch)
        page.meta = header(records, ctx, page, label=label, fmt=fmt)
        if body is not None:
            page.meta["provider"] = provider or {"name": "provider", "model": ""}
            page.turns, into = turns_of_messages(ctx.messages, body)
            for row in page.rows:
                if row["cx"]:
                    row["pv"] = sorted({k for entry in row["cx"] for k in into[entry["j"]]})
        return render_parts(page, release_rows=True)  # the page is this call's own

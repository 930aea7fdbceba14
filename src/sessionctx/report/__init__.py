"""`sessionctx report`: one self-contained HTML page that shows a session three ways — what was
stored, what a person sees, what reaches the model — with every change and its reason."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sessionctx.context import Context
from sessionctx.records import Problem, Record
from sessionctx.report.model import Page, header, page_model
from sessionctx.report.page import render

__all__ = ["Page", "page_model", "render", "report_html"]


def report_html(records: Sequence[Record], ctx: Context, *, label: str,
                fmt: str | None = None, problems: Iterable[Problem] = (),
                off_branch: Iterable[Record] = (),
                turns: list[dict[str, Any]] | None = None,
                provider: dict[str, str] | None = None) -> str:
    """The page for a session already read and built; pure, writes nothing."""
    page = page_model(records, ctx, problems=problems, off_branch=off_branch)
    page.meta = header(records, ctx, page, label=label, fmt=fmt)
    if provider is not None:
        page.meta["provider"] = provider
        page.turns = turns or []
    return render(page)

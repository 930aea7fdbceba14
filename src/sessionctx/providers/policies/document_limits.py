"""Document limits (docs/provider-rules.md §1.5, §2, §4, §5): documents stay in user messages and
tool results, within the provider's count, size and PDF page limits; one that cannot go becomes a
note saying so. As with images, a document kept over a limit would fail every later turn too. """

from __future__ import annotations

from sessionctx.providers import documents
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies.ids import Results
from sessionctx.providers.policies.image_limits import ReadImage
from sessionctx.providers.policies.turns import Block, Prepared

# (document, message index, the result holding it or None, in an assistant message)
ReadDocument = ReadImage


def limit_documents(prep: Prepared, read: list[ReadDocument], results: Results,
                    cap: Capability) -> None:
    """The reader's own document blocks are rewritten in place: the oldest over a count or
    page limit, and any over the size limit or unreadable, become notes."""
    found: list[tuple[Block, int, int]] = []  # (document, message index, PDF pages)
    for doc, index, result, assistant in read:
        if assistant:
            _omit(prep, doc, index, "is in an assistant message, where documents are not "
                  "accepted")
            continue
        if result is not None and results.get(result["id"], (0, None))[1] is not result:
            continue  # its result was dropped
        raw = documents.raw_bytes(doc)
        if raw is None:
            _omit(prep, doc, index, "has data that is not valid base64")
            continue
        limit = cap.max_document_bytes
        if limit is not None and len(raw) > limit:
            _omit(prep, doc, index, f"is {len(raw)} bytes, over {cap.provider}'s limit of "
                  f"{limit} bytes per document")
            continue
        found.append((doc, index, documents.pages(raw) if doc["mimeType"] ==
                      documents.PDF else 0))
    count = cap.max_documents
    if count is not None and len(found) > count:
        for doc, index, _ in found[:len(found) - count]:
            _omit(prep, doc, index, f"is over {cap.provider}'s limit of {count} documents per "
                  "request (the oldest were left out)")
        found = found[len(found) - count:]
    pages = cap.max_pdf_pages
    total = sum(p for _, _, p in found)
    for doc, index, p in found:
        if pages is None or total <= pages:
            break
        if p:
            _omit(prep, doc, index, f"would take the request over {cap.provider}'s limit of "
                  f"{pages} PDF pages ({total}; the oldest were left out)")
            total -= p


def _omit(prep: Prepared, doc: Block, index: int, why: str) -> None:
    replacement = documents.note(doc, why)
    prep.log(documents.DOCUMENT_OMITTED, f"the document {why}; a note stands in for it",
             index, block=doc, name=documents.label(doc))
    doc.clear()
    doc.update(replacement)

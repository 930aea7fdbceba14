"""Document limits (docs/provider-rules.md §1.5, §2, §4, §5): documents stay in user messages and
tool results, within the provider's count, size and PDF page limits; one that cannot go becomes a
note saying so. As with images, a document kept over a limit would fail every later turn too. """

from __future__ import annotations

from sessionctx.messages import DocumentBlock
from sessionctx.providers import documents
from sessionctx.providers.capabilities import Capability
from sessionctx.providers.policies.ids import Results, sent
from sessionctx.providers.policies.turns import Notes, Prepared, ResultBlock

# (document, message index, the result holding it or None, in an assistant message)
ReadDocument = tuple[DocumentBlock, int, ResultBlock | None, bool]


def limit_documents(prep: Prepared, read: list[ReadDocument], results: Results,
                    cap: Capability) -> None:
    """The oldest documents over a count or page limit, and any over the size limit or
    unreadable, become notes in their places."""
    notes = Notes()
    found: list[tuple[ReadDocument, int]] = []  # (the document as read, its PDF pages)
    for read_doc in read:
        doc, _, result, assistant = read_doc
        if assistant:
            _omit(prep, notes, read_doc, "is in an assistant message, where documents are not "
                  "accepted")
            continue
        if result is not None and not sent(results, result):
            continue  # its result was dropped
        raw = documents.raw_bytes(doc)
        if raw is None:
            _omit(prep, notes, read_doc, "has data that is not valid base64")
            continue
        limit = cap.max_document_bytes
        if limit is not None and len(raw) > limit:
            _omit(prep, notes, read_doc, f"is {len(raw)} bytes, over {cap.provider}'s limit "
                  f"of {limit} bytes per document")
            continue
        found.append((read_doc, documents.pages(raw) if doc["mimeType"] ==
                      documents.PDF else 0))
    count = cap.max_documents
    if count is not None and len(found) > count:
        for read_doc, _ in found[:len(found) - count]:
            _omit(prep, notes, read_doc, f"is over {cap.provider}'s limit of {count} documents "
                  "per request (the oldest were left out)")
        found = found[len(found) - count:]
    pages = cap.max_pdf_pages
    total = sum(p for _, p in found)
    for read_doc, p in found:
        if pages is None or total <= pages:
            break
        if p:
            _omit(prep, notes, read_doc, f"would take the request over {cap.provider}'s limit "
                  f"of {pages} PDF pages ({total}; the oldest were left out)")
            total -= p
    notes.put(prep)


def _omit(prep: Prepared, notes: Notes, read: ReadDocument, why: str) -> None:
    doc, index, result, _ = read
    notes.add(doc, index, result, documents.note(doc, why))
    prep.log(documents.DOCUMENT_OMITTED, f"the document {why}; a note stands in for it",
             index, block=doc, name=documents.label(doc))

"""A limit puts a note in the place of an image or a document it cannot send, in the turn or
the result that holds it; the block it replaces keeps its type (a turn's block is typed, so no
pass turns one kind of block into another in place)."""

from __future__ import annotations

from typing import Any

from sessionctx.messages import Message
from sessionctx.providers.capabilities import capability
from sessionctx.providers.policies import Prepared, Reader
from sessionctx.providers.policies.document_limits import limit_documents
from sessionctx.providers.policies.ids import WireIds
from sessionctx.providers.policies.image_limits import limit_images
from tests.conftest import assistant, call, image, result, text, user


def limited(*messages: Message, provider: str = "anthropic") -> tuple[Prepared, Reader]:
    """The turns of `messages` read, their ids paired, and both limits run over them."""
    cap, model = capability(provider)
    msgs = list(messages)
    prep = Prepared([], [], None, messages=msgs)
    reader = Reader(prep, cap, True, model)
    prep.turns = reader.read(msgs)
    ids = WireIds(prep, cap)
    ids.run(reader.sites)
    limit_images(prep, reader.images, ids.results, cap)
    limit_documents(prep, reader.documents, ids.results, cap)
    return prep, reader


def note(turn_blocks: list[Any], k: int) -> str:
    block = turn_blocks[k]
    assert block["type"] == "text"
    return str(block["text"])


def test_an_image_a_limit_refuses_is_replaced_in_its_turn_and_keeps_its_type() -> None:
    shown = image(mime="image/bmp")
    prep, reader = limited(user("see", content=[text("see"), shown]),
                           assistant(text("an image of mine"), image()))
    refused, drawn = reader.images[0][0], reader.images[1][0]
    assert refused["type"] == "image" and drawn["type"] == "image"
    assert note(prep.turns[0][1], 1) == "[image omitted: type image/bmp is not accepted]"
    assert note(prep.turns[1][1], 1) == ("[image omitted: anthropic does not accept "
                                             "images in assistant messages]")
    # the change about the note still names the stored block it stands for
    assert prep.copied[id(prep.turns[0][1][1])] is shown


def test_an_image_of_a_result_is_replaced_in_the_result_content() -> None:
    prep, reader = limited(user("go"), assistant(call("c1")),
                           result("c1", "shot", "bash", image(mime="image/bmp")))
    held = prep.turns[2][1][0]
    assert held["type"] == "toolResult"
    assert [b["type"] for b in held["content"]] == ["text", "text"]
    assert reader.images[0][0]["type"] == "image"


def test_a_document_a_limit_refuses_is_replaced_and_keeps_its_type() -> None:
    doc = {"type": "document", "mimeType": "application/pdf", "data": "not base64!"}
    prep, reader = limited(user("read", content=[text("read"), doc]))
    assert note(prep.turns[0][1], 1).startswith("[document omitted:")
    assert reader.documents[0][0]["type"] == "document"

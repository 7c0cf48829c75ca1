"""Token counts (codegen/surface/tokens.py): the compiled tokenizer, loaded alone, counts exactly as the
bpe-openai package's own cl100k encoder, on real text and on the edge cases a spec can carry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codegen.surface import tokens

ROOT = Path(__file__).resolve().parents[1]
TEXTS = [
    "",
    "<|endoftext|> special markers are ordinary text",
    "héllo wörld 😀 \u0000 tabs\tand\r\nnewlines   ",
    "a" * 250_000,  # longer than the package's chunk
    " ".join(str(n) for n in range(40_000)),
    (ROOT / "tests/golden/petstore/src/petstore/tools.json").read_text(encoding="utf-8") * 30,
]


def test_the_compiled_tokenizer_is_used_and_counts_as_the_package() -> None:
    assert tokens._rust_count() is not None
    for text in TEXTS:
        assert tokens.count_tokens(text) == tokens._chunked_count(text), text[:40]


def test_a_lone_surrogate_is_counted_not_raised() -> None:
    assert tokens.count_tokens("x\ud800y") == tokens.count_tokens("x\ufffdy")


@pytest.mark.parametrize("value", [{"tools": []}, {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}])
def test_listing_tokens_count_the_wire_form(value: dict[str, list[object]]) -> None:
    assert tokens.listing_tokens(value["tools"]) == tokens.count_tokens(tokens.wire(value))


@pytest.mark.parametrize("flush", [1 << 20, 300])
def test_a_listing_measured_in_parts_is_the_listing_serialized_and_counted_whole(
    flush: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """listing_text.py: definitions shared between tools serialized once and their tokens counted once, the rest
    counted in pieces: the text and the count are exactly json.dumps' text and its count."""
    import json

    from codegen.surface import token_chunks
    from codegen.surface.listing_text import ListingText

    monkeypatch.setattr(token_chunks, "FLUSH", flush)

    shared = {"description": "A user's address, and the lines of it", "type": "object", "properties": {"x": {}}}
    odd = [{"enum": [1, 2, 3]}, {"description": "x\ud800y ünï", "type": "string"}, {}, {"description": "1.2"}]
    tools = [
        {
            "name": f"tool_{n}",
            "description": "Reads — héllo wörld 😀 " * (n % 7),
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"$ref": "#/$defs/Address"}, "n": {"type": "integer", "enum": list(range(n))}},
                "$defs": {"Address": shared, "Odd": odd[n % len(odd)], "Zero": {"type": "null"}},
            },
            "outputSchema": {"type": "object", "properties": {}, "$defs": {}} if n % 2 else {"type": "object"},
            "annotations": {"readOnlyHint": True},
        }
        for n in range(300)
    ]
    tools.append({7: "keys json writes as strings"})  # type: ignore[dict-item]
    tools.append({"name": "y", "inputSchema": {"type": "object", "properties": {5: {}}, "$defs": {1.5: {}}}})
    text = json.dumps(tools, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    writer = ListingText()
    for _ in range(2):  # the second time from what the first remembered
        characters, counted, written = writer.measure(tools)
        assert (characters, counted, written) == (
            len(text),
            tokens.count_tokens(text),
            text.encode("utf-8", "surrogatepass"),
        )
    assert writer.measure([]) == (2, 1, b"[]")
    assert writer.measure(tools, keep_text=False)[:2] == (len(text), tokens.count_tokens(text))


def test_the_listing_writes_values_as_the_json_encoder_and_fails_as_it_does() -> None:
    """listing_text._dump: the compiled encoder made once, not per call; the same text, the same failures, and a
    failure leaves nothing behind for the next call."""
    import json

    from codegen.surface.listing_text import _dump

    encode = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode
    values = ["x\ud800y é😀\x00", {"b": [1.5, None, True], "a": {}}, [], 3, -0.0, 1e300, {2: "x", 10: "y"}, False]
    assert [_dump(value) for value in values] == [encode(value) for value in values]
    circular: list[Any] = []
    circular.append({"again": circular})
    for _ in range(2):
        with pytest.raises(ValueError, match="Circular reference"):
            _dump(circular)
        with pytest.raises(TypeError):
            _dump({"a": 1, 2: "b"})
        assert _dump({"z": [circular[0]["again"] is circular]}) == '{"z":[true]}'

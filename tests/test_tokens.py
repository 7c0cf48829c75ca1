"""Token counts (codegen/surface/tokens.py): the compiled tokenizer, loaded alone, counts exactly as the
bpe-openai package's own cl100k encoder, on real text and on the edge cases a spec can carry."""

from __future__ import annotations

from pathlib import Path

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

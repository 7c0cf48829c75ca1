"""JSON text holding characters above U+FFFF is read through its ASCII form (spec/parse.py, _ascii_text): the same
document, problems and errors as reading the text as it is, on every input, tricky or broken."""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any

import pytest

from codegen.spec import parse as parsing
from codegen.spec.policy import LoadError, ReadPolicy

POLICY = ReadPolicy()


def as_it_is(data: bytes) -> Any:
    """What parse gives without the ASCII route."""
    original = parsing._ascii_text
    parsing._ascii_text = lambda body: None  # type: ignore[assignment]
    try:
        return parsing.parse(data, "spec.json", POLICY)
    finally:
        parsing._ascii_text = original  # type: ignore[assignment]


def outcome(read: Any, data: bytes) -> tuple[str, Any]:
    try:
        return "document", read(data)
    except LoadError as exc:
        return "error", (str(exc), exc.pointer)


READABLE = [
    '{"emoji": "🍫 and 🚒", "é": "über", "nbsp": "a\u00a0b", "dash": "–"}',
    '{"keys": {"🪲": 1, "na\u00efve": [1, 2.5, true, null]}}',
    '["🚢", "\\u00e9 escaped", "\\ud83c\\udf6b escaped pair", "raw é"]',
    '{"lone": "\\ud800 and 🍫"}',  # a lone surrogate escape: scrubbed to U+FFFD either way
    '{"backslash": "\\\\🍫"}',  # an escaped backslash, then an emoji
    '  \n {"leading space": "🍫"}',
    '{"bmp only": "über – naïve"}',  # no character above U+FFFF: read as it is
]

BROKEN = [
    '{"escape": "\\🍫"}',  # a backslash right before an emoji: invalid JSON, as it is
    '{"outside": 1 🍫}',  # a non-ASCII character outside a string
    '{"unterminated": "🍫}',
    '{"trailing": "🍫",}',
]


@pytest.mark.parametrize("text", READABLE + BROKEN)
def test_same_outcome_as_reading_the_text_as_it_is(text: str) -> None:
    data = text.encode("utf-8")
    assert outcome(lambda d: parsing.parse(d, "spec.json", POLICY), data) == outcome(as_it_is, data)


@pytest.mark.parametrize("text", READABLE)
def test_with_a_byte_order_mark(text: str) -> None:
    data = codecs.BOM_UTF8 + text.encode("utf-8")
    assert parsing.parse(data, "spec.json", POLICY) == as_it_is(data)


@pytest.mark.parametrize(
    "data",
    [
        b'{"bad": "\xf0\x9f\x8d"}',  # a character cut short
        b'{"bad": "\xf0\x9f\x8d\xab\xab"}',  # a continuation byte no character starts
        b'{"bad": "\xed\xa0\x80 \xf0\x9f\x8d\xab"}',  # a surrogate encoded as UTF-8
        b'{"bad": "\xc0\x80 \xf0\x9f\x8d\xab"}',  # an overlong encoding
        b'{"bad": "\xf5\x80\x80\x80"}',  # above U+10FFFF
    ],
)
def test_bytes_that_are_not_utf8_are_refused_as_before(data: bytes) -> None:
    assert outcome(lambda d: parsing.parse(d, "spec.json", POLICY), data) == outcome(as_it_is, data)
    assert outcome(as_it_is, data)[0] == "error"


def test_the_ascii_form_is_used_and_holds_a_byte_a_character() -> None:
    body = json.dumps({"emoji": "🍫", "text": "x" * 1000}, ensure_ascii=False).encode("utf-8")
    text = parsing._ascii_text(body)
    assert text is not None and text.isascii()
    assert json.loads(text) == json.loads(body)


def test_too_deep_is_refused_with_the_same_pointer() -> None:
    data = ('{"🍫": ' + '{"items": ' * 300 + "{}" + "}" * 300 + "}").encode("utf-8")
    assert outcome(lambda d: parsing.parse(d, "spec.json", POLICY), data) == outcome(as_it_is, data)
    kind, (message, pointer) = outcome(as_it_is, data)
    assert kind == "error" and "nested deeper than" in message and pointer.startswith("/🍫/items")


def test_many_non_ascii_bytes_are_read_as_they_are() -> None:
    body = json.dumps({"text": "日本語" * 2000 + "🍫"}, ensure_ascii=False).encode("utf-8")
    assert parsing._ascii_text(body) is None


def test_a_spec_with_emoji_generates_the_same_files_as_without_the_ascii_route(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codegen.config import Config
    from codegen.pipeline import generate

    spec = {
        "openapi": "3.0.3",
        "info": {"title": "Snacks 🍫", "version": "1"},
        "paths": {
            "/snacks": {
                "get": {
                    "operationId": "listSnacks",
                    "summary": "List snacks 🍫 – über",
                    "responses": {"200": {"description": "the snacks 🚒"}},
                }
            }
        },
    }
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    config = Config(spec=str(path), output=tmp_path / "out")
    first = generate(config)
    with monkeypatch.context() as patched:
        patched.setattr(parsing, "_ascii_text", lambda body: None)
        second = generate(config)
    assert first.files and dict(first.files) == dict(second.files)
    assert first.problems == second.problems


@pytest.mark.parametrize("levels", [1, 150, 199, 200, 201, 202, 260])
@pytest.mark.parametrize("opener", ['{"a":', "["])
def test_nesting_bounded_by_the_parser_agrees_with_the_walk(
    levels: int, opener: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parser's own nesting count (CPython 3.11) decides as the walk does, at any depth of the caller's stack."""
    closer = "}" if opener.startswith("{") else "]"
    data = (opener * levels + "1" + closer * levels).encode()

    def nested(calls: int) -> tuple[str, Any]:
        return nested(calls - 1) if calls else outcome(lambda d: parsing.parse(d, "spec.json", POLICY), data)

    with monkeypatch.context() as patched:
        patched.setattr(parsing, "_ONE_LIMIT", False)
        walked = outcome(lambda d: parsing.parse(d, "spec.json", POLICY), data)
    assert walked[0] == ("document" if levels <= POLICY.max_depth else "error")
    assert outcome(lambda d: parsing.parse(d, "spec.json", POLICY), data) == walked
    assert nested(300) == walked

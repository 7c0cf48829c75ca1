"""Token counts kept between runs (surface/token_cache.py): looked up exactly as counted, bounded, never a failure,
and a warm run does not load the tokenizer at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from codegen.surface import token_cache, tokens

TEXTS = [
    "",
    "hello world",
    '{"type":"object","properties":{"id":{"type":"integer"}}}',
    "naïve 🍫 – über" * 20,
    "lone \ud800 surrogate",
    "x" * 250_000,  # longer than one encoder call
]


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("MCP_CODEGEN_CACHE", str(tmp_path))
    token_cache.forget()
    yield tmp_path
    token_cache.forget()


def counted_without_cache(text: str) -> int:
    return tokens._count(text)


def test_counts_read_back_are_the_counts(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = [tokens.count_tokens(text) for text in TEXTS]
    assert first == [counted_without_cache(text) for text in TEXTS]
    tokens.keep_counts()
    assert list((cache_dir / token_cache.KIND).iterdir())
    token_cache.forget()

    def refuse(text: str) -> int:
        raise AssertionError("counted again instead of looked up")

    monkeypatch.setattr(tokens, "_count", refuse)
    assert [tokens.count_tokens(text) for text in TEXTS] == first


@pytest.mark.parametrize("damage", [b"", b"not a count file", None])
def test_a_damaged_file_is_an_empty_cache(cache_dir: Path, damage: bytes | None) -> None:
    tokens.count_tokens("some text")
    tokens.keep_counts()
    (path,) = (cache_dir / token_cache.KIND).iterdir()
    data = path.read_bytes()
    path.write_bytes(data[:-3] if damage is None else damage)  # None: cut short
    token_cache.forget()
    assert tokens.count_tokens("some text") == counted_without_cache("some text")
    assert tokens.count_tokens("other text") == counted_without_cache("other text")
    tokens.keep_counts()
    assert path.read_bytes().startswith(token_cache.HEADER)


def test_nothing_is_written_with_the_cache_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_CODEGEN_CACHE", "off")
    token_cache.forget()
    try:
        assert tokens.count_tokens("a text") == counted_without_cache("a text")
        tokens.keep_counts()
    finally:
        token_cache.forget()
    assert not list(tmp_path.iterdir())


def test_past_the_limit_the_file_keeps_the_most_recently_used(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(token_cache, "MAX_COUNTS", 4)
    for number in range(4):
        tokens.count_tokens(f"old text {number}")
    tokens.keep_counts()
    token_cache.forget()
    tokens.count_tokens("old text 0")  # looked up
    tokens.count_tokens("new text")  # counted: five in all, one more than kept
    tokens.keep_counts()
    token_cache.forget()
    tokenizer = tokens.tokenizer()
    for kept in ("old text 0", "new text", "old text 2", "old text 3"):  # this run's, then the latest before it
        assert token_cache.known(token_cache.digest(kept), tokenizer) is not None
    assert token_cache.known(token_cache.digest("old text 1"), tokenizer) is None  # the least recently used


def test_two_apis_past_the_limit_keep_each_others_counts_as_far_as_they_fit(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A, then B, more counts than the file keeps: B's are kept and as many of A's as fit, so A's next run finds most
    of its counts (before, each run kept only its own, and the next API counted everything again)."""
    monkeypatch.setattr(token_cache, "MAX_COUNTS", 6)
    first = [f"first API text {number}" for number in range(4)]
    second = [f"second API text {number}" for number in range(4)]
    for texts in (first, second):
        for text in texts:
            tokens.count_tokens(text)
        tokens.keep_counts()
        token_cache.forget()
    tokenizer = tokens.tokenizer()
    found = [token_cache.known(token_cache.digest(text), tokenizer) is not None for text in first + second]
    assert found == [False, False, True, True, True, True, True, True]


def test_a_warm_generation_does_not_load_the_tokenizer(tmp_path: Path) -> None:
    """A listing of 250 tools is counted; the second generation of the same spec looks every count up."""
    paths = {
        f"/things{number}": {
            "get": {
                "operationId": f"getThing{number}",
                "summary": f"Get thing {number}",
                "responses": {"200": {"description": "the thing", "content": {"application/json": {"schema": {}}}}},
            }
        }
        for number in range(250)
    }
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "paths": paths}))
    probe = (
        "import sys\n"
        "from codegen.config import Config\n"
        "from codegen.pipeline import generate\n"
        "from codegen.surface import tokens\n"
        f"result = generate(Config(spec={str(spec)!r}, surface='tools'))\n"
        "assert result.files\n"
        "print(tokens._rust_count.cache_info().currsize)\n"
    )
    environment = {**os.environ, "MCP_CODEGEN_CACHE": str(tmp_path / "cache"), "MCP_CODEGEN_HELPERS": "0"}
    root = Path(__file__).resolve().parent.parent

    def loaded() -> str:
        run = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, env=environment, cwd=root, timeout=300
        )
        assert run.returncode == 0, run.stderr
        return run.stdout.strip()

    assert loaded() == "1"  # cold: counted
    assert loaded() == "0"  # warm: looked up

"""Token counts as a model sees text: cl100k (the encodings ship inside `bpe-openai`; nothing is downloaded)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import warnings
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, cast

from . import token_cache

CHUNK = 100_000  # characters encoded at a time (the encoder refuses very long inputs)


@cache
def _binary() -> Path | None:
    """The tokenizer's compiled extension (None: not found where the package is)."""
    try:
        package = importlib.util.find_spec("bpe_openai")
    except (ImportError, ValueError):
        return None
    folders = [Path(f) for f in (package.submodule_search_locations or ())] if package else []
    names = [f"_bindings{suffix}" for suffix in importlib.machinery.EXTENSION_SUFFIXES]
    return next((f / n for f in folders for n in names if (f / n).is_file()), None)


@cache
def tokenizer() -> str | None:
    """What the counts are counted with, for the counts kept between runs (token_cache.py), without loading it: the
    extension's path, size and modification time (the Python package counts the same). None: no extension found."""
    binary = _binary()
    try:
        info = binary.stat() if binary is not None else None
    except OSError:
        return None
    return f"cl100k_base {binary} {info.st_size} {info.st_mtime_ns}" if info is not None else None


@cache
def _rust_count() -> Callable[[str], int] | None:
    """The Rust tokenizer's counter, loaded alone. Importing the `bpe_openai` package also parses every
    encoding it knows (cl100k, o200k, ...) in Python, ~0.6 s of each generation; its compiled extension holds
    the same encodings and counts exactly as the package's `encode_ordinary` (tests/test_tokens.py). None when
    the extension cannot be loaded this way (then the package is used)."""
    try:
        binary = _binary()
        spec = importlib.util.spec_from_file_location("bpe_openai._bindings", binary) if binary else None
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return cast(Callable[[str], int], module.tokenizer_for_encoding("cl100k_base").count)
    except (ImportError, OSError, AttributeError, ValueError):
        return None


@cache
def _encoding() -> Any:
    with warnings.catch_warnings():  # its resource loading uses a deprecated importlib call
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        return bpe_openai.get_encoding("cl100k_base")


def count_tokens(text: str) -> int:
    """cl100k tokens in `text` (special-token markers count as ordinary text); a text counted before, in this run
    or an earlier one on this machine, is looked up (token_cache.py)."""
    key = token_cache.digest(text)
    found = token_cache.known(key, tokenizer())
    if found is None:
        found = _count(text)
        token_cache.add(key, found)
    return found


def keep_counts() -> None:
    """This run's new counts kept for the next runs (the end of a generation)."""
    token_cache.save(tokenizer())


def _count(text: str) -> int:
    count = _rust_count()
    if count is not None:
        try:
            return count(text)
        except UnicodeEncodeError:  # a lone surrogate (a JSON escape in the spec): counted as U+FFFD
            return count(text.encode("utf-8", "surrogatepass").decode("utf-8", "replace"))
    return _chunked_count(text)


def _chunked_count(text: str) -> int:
    """The package's count. Long text is encoded in chunks cut right after a run of letters, which always
    ends a pre-tokenizer piece, so the count is exact."""
    encoding = _encoding()
    total, start = 0, 0
    while len(text) - start > CHUNK:
        cut = start + CHUNK
        while cut > start + 1 and not (text[cut - 1].isalpha() and not text[cut].isalpha()):
            cut -= 1
        if cut == start + 1:  # no letters at all: cut anywhere (off by a token or two at most)
            cut = start + CHUNK
        total += len(encoding.encode_ordinary(text[start:cut]))
        start = cut
    return total + len(encoding.encode_ordinary(text[start:]))


def wire(value: Any) -> str:
    """`value` as JSON the way the server sends it: compact, UTF-8."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def listing_tokens(tools: Sequence[Mapping[str, Any]]) -> int:
    """Tokens of a tools/list result holding `tools`."""
    return count_tokens(wire({"tools": list(tools)}))

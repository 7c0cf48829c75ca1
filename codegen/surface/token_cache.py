"""Token counts kept between runs, by a digest of each text counted: a pure function's results, like black's output
in emit/cache.py (the same folder, `MCP_CODEGEN_CACHE`; `off` turns both off).

A large API's listing is thousands of distinct chunks (token_chunks.py), counted with the cl100k tokenizer, which
takes a moment to load before it counts anything. Once counted on this machine, a chunk is looked up the next time:
a CI re-run, `--check`, a spec changed in a few operations. A count is the same whether looked up or counted, so
nothing generated changes; when every count is known the tokenizer is not loaded at all. The file names the
tokenizer it was counted with (the binary's path, size and modification time): another one starts a new file.

The file holds 64-bit digests (BLAKE2b) and counts, read in one piece at the first count of a run; a run that
counted something new writes it back whole (atomically), least recently used first. Past MAX_COUNTS, the file keeps
the most recently used: the last run's counts, then as many of the runs' before as fit. A file that cannot be read
or written is an empty cache.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from array import array
from pathlib import Path

from ..emit import cache

KIND = "tokens"  # the cache's folder for token counts
HEADER = b"mcp-codegen token counts 1\n"
MAX_COUNTS = 1 << 16  # counts a file keeps (12 bytes each)
MAX_FILE = len(HEADER) + 8 + MAX_COUNTS * 12  # a larger file is not read

_known: dict[int, int] | None = None  # digest -> tokens: the file's, then this run's
_used: dict[int, int] = {}  # what this run counted or looked up
_added = False  # this run counted something the file does not hold


def digest(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def known(key: int, tokenizer: str | None) -> int | None:
    """The count of the text whose digest is `key`, if counted before with `tokenizer` (None: no file)."""
    global _known
    if _known is None:
        _known = _read(tokenizer)
    found = _known.get(key)
    if found is not None:
        _used[key] = found
    return found


def add(key: int, tokens: int) -> None:
    global _added
    if _known is not None:
        _known[key] = tokens
    _used[key] = tokens
    _added = True


def save(tokenizer: str | None) -> None:
    """Write the counts back when this run counted something new."""
    global _added
    path = _path(tokenizer)
    if not _added or path is None or _known is None:
        return
    _added = False
    kept = _recent_first_kept(_known, _used)
    keys, counts = array("Q", kept.keys()), array("I", (min(c, 0xFFFFFFFF) for c in kept.values()))
    if sys.byteorder != "little":
        keys.byteswap()
        counts.byteswap()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(HEADER + len(kept).to_bytes(8, "little") + keys.tobytes() + counts.tobytes())
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        return


def _recent_first_kept(known: dict[int, int], used: dict[int, int]) -> dict[int, int]:
    """The counts to write, least recently used first (the file's order, then this run's): at most MAX_COUNTS, the
    most recently used kept. Several APIs generated on one machine (a monorepo's CI) then keep each other's counts
    as far as they fit, instead of each run keeping only its own."""
    ordered = [(key, count) for key, count in known.items() if key not in used]
    ordered += used.items()
    return dict(ordered[-MAX_COUNTS:])


def forget() -> None:
    """This process's counts dropped (tests: the next count reads the file again)."""
    global _known, _added
    _known, _added = None, False
    _used.clear()


def _path(tokenizer: str | None) -> Path | None:
    root = cache.cache_root()
    if root is None or tokenizer is None or array("Q").itemsize != 8 or array("I").itemsize != 4:
        return None
    return root / KIND / cache.key(HEADER.decode(), tokenizer)


def _read(tokenizer: str | None) -> dict[int, int]:
    path = _path(tokenizer)
    if path is None:
        return {}
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_FILE + 1)
    except OSError:
        return {}
    if len(data) > MAX_FILE or not data.startswith(HEADER):
        return {}
    start = len(HEADER) + 8
    count = int.from_bytes(data[len(HEADER) : start], "little")
    if count > MAX_COUNTS or len(data) != start + count * 12:
        return {}
    keys, counts = array("Q"), array("I")
    keys.frombytes(data[start : start + count * 8])
    counts.frombytes(data[start + count * 8 :])
    if sys.byteorder != "little":
        keys.byteswap()
        counts.byteswap()
    return dict(zip(keys, counts))

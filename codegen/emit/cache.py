"""A content-addressed cache for generation's pure, costly steps: black's output, compiled templates and the
validator's findings (spec/validate.py).

Most generated Python files are the same text from one run to the next (the templates' code, the package
name), so their black output is looked up by a hash of the input text, black's version and its mode instead
of being computed again: the output stays byte-identical, only the work is skipped. Entries live in memory
for the process and on disk under `MCP_CODEGEN_CACHE` (default `$XDG_CACHE_HOME/mcp-codegen`, else
`~/.cache/mcp-codegen`); `MCP_CODEGEN_CACHE=off` turns the disk cache off. A disk entry that cannot be read
or written is simply a miss: the cache never changes what is generated and never fails a run.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

MAX_ENTRY_BYTES = 8 << 20  # larger texts are formatted every time
MAX_ENTRIES = 2048  # per kind; past this the oldest half is removed
_memory: dict[str, str] = {}


def cache_root() -> Path | None:
    """The cache folder, or None when the disk cache is turned off."""
    configured = os.environ.get("MCP_CODEGEN_CACHE", "")
    if configured.lower() in ("off", "0", "no", "false"):
        return None
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mcp-codegen"


def key(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


def lookup(kind: str, name: str) -> str | None:
    """A cached text by its key, from memory or disk (None: a miss)."""
    found = _memory.get(name)
    if found is not None:
        return found
    root = cache_root()
    if root is None:
        return None
    try:
        path = root / kind / name[:2] / name
        if path.stat().st_size > MAX_ENTRY_BYTES:
            return None
        text = path.read_text(encoding="utf-8", errors="surrogatepass")
    except (OSError, UnicodeDecodeError):
        return None
    _memory[name] = text
    return text


def store(kind: str, name: str, text: str) -> None:
    """Keep `text` under its key: in memory, and on disk when the cache folder is writable."""
    _memory[name] = text
    root = cache_root()
    if root is None or len(text) > MAX_ENTRY_BYTES:
        return
    folder = root / kind / name[:2]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8", errors="surrogatepass") as out:
                out.write(text)
            os.replace(temporary, folder / name)
        except BaseException:
            os.unlink(temporary)
            raise
        _trim(root / kind)
    except OSError:
        return


def _trim(folder: Path) -> None:
    """Bound the cache: past MAX_ENTRIES files, remove the least recently written half."""
    try:
        entries = [p for sub in folder.iterdir() if sub.is_dir() for p in sub.iterdir()]
    except OSError:
        return
    if len(entries) <= MAX_ENTRIES:
        return
    dated = []
    for entry in entries:
        try:
            dated.append((entry.stat().st_mtime, entry))
        except OSError:
            continue
    for _, entry in sorted(dated)[: len(dated) // 2]:
        try:
            entry.unlink()
        except OSError:
            continue

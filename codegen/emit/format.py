"""Format generated Python with black, in-process, then compile it: code that does not compile is never written.

black's output is cached by a hash of its input (emit/cache.py): a text formatted (and compiled) before is not
formatted or compiled again, and black is imported only when some text is new. The templates render text black
leaves as it is, so black makes one pass over each file, not two (tests/test_black_clean.py).

On a cold cache (a fresh CI machine: every file new) the new texts are shared with one forked helper process
(codegen/forked.py) when there is enough of them and a second CPU is idle: black is deterministic, so the output
is the same whichever process formats a file, and whatever the helper does not deliver (it failed, or took too
long) is formatted here.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from .. import forked
from ..problems import Problem, error
from . import cache
from .files import Content
from .render import DISCOVERY_FILES, FILES

SHARE_BYTES = 64_000  # new text below this is formatted here only: a helper would not pay for its start


def _black_version() -> str:
    """black's version, without importing black: from the module its wheel installs for that (importlib.metadata
    looks it up among every installed distribution, ~0.1 s of CPU)."""
    try:
        from _black_version import version

        return str(version)
    except ImportError:
        from importlib.metadata import version as installed

        return installed("black")


BLACK = f"black {_black_version()} line-length=88 default mode"  # what the cache keys name
COMPILED = "compiled"  # a key for output that also compiled


def format_files(files: Mapping[str, Content]) -> tuple[dict[str, Content], list[Problem]]:
    python = {path: text for path, text in files.items() if path.endswith(".py") and isinstance(text, str)}
    formatted: dict[str, Content] = {}
    problems: list[Problem] = []
    with _heap_frozen():
        done = _formatted(python)
        for path, text in files.items():
            if path in python:
                try:
                    text = done[path] if path in done else checked_format(python[path], path)
                except Exception as exc:  # noqa: BLE001 - black and compile raise several types for invalid code
                    where = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) else ""
                    problems.append(
                        error(
                            f"internal error: generated {path}{where} is not valid Python; template "
                            f"{template_of(path)} (or a custom template) let spec text through unescaped: "
                            f"{_first_line(exc)}"
                        )
                    )
            formatted[path] = text
    return formatted, problems


@contextmanager
def _heap_frozen() -> Iterator[None]:
    """The objects alive before formatting kept out of the garbage collector's sight while black runs: black's
    syntax trees are cyclic garbage, collected as usual, but the collections they cause no longer walk the whole
    heap (a large API's tools: seconds of CPU), nor copy the pages a helper process shares. Unfrozen after (as
    the oldest generation); left alone if something else froze objects."""
    frozen = not gc.get_freeze_count()
    if frozen:
        gc.freeze()
    try:
        yield
    finally:
        if frozen:
            gc.unfreeze()


def checked_format(text: str, path: str = "<generated>") -> str:
    """black's output for `text`, compiled: from the cache when this text was formatted and compiled before (only
    output that compiled is cached, so a hit needs neither black nor the compiler; black is imported on a miss)."""
    name = cache.key(BLACK, COMPILED, text)
    found = cache.lookup("black", name)
    if found is None:
        found = _black(text, path)
        cache.store("black", name, found)
    return found


def _black(text: str, path: str) -> str:
    import black

    found: str = black.format_str(text, mode=black.Mode())
    compile(found, path, "exec", dont_inherit=True)
    return found


def _formatted(texts: Mapping[str, str]) -> dict[str, str]:
    """{path: black's compiled output} for the texts found in the cache and those formatted here and by a helper
    process when one is worth starting (cached like checked_format's). The rest is left to checked_format, which
    also reports failures."""
    names = {path: cache.key(BLACK, COMPILED, text) for path, text in texts.items()}
    done: dict[str, str] = {}
    new: dict[str, str] = {}
    for path, text in texts.items():
        found = cache.lookup("black", names[path])
        if found is None:
            new[path] = text
        else:
            done[path] = found
    theirs = _helper_share(new)
    if not theirs:
        return done
    import black  # noqa: F401 - imported before the fork: the helper inherits it

    with forked.Helper(lambda: _black_all(theirs)) as helper:
        for path in new.keys() - theirs.keys():  # this process's share (checked_format stores it)
            try:
                done[path] = checked_format(new[path], path)
            except Exception:  # noqa: BLE001 - reported by format_files, which formats it again
                continue
        delivered = helper.result() or {}
        for path, found in delivered.items():
            if path in theirs and isinstance(found, str):
                cache.store("black", names[path], found)
                done[path] = found
    return done


def _helper_share(new: Mapping[str, str]) -> dict[str, str]:
    """The texts for a helper process: about half of `new` by size (the largest first, each to the lighter side);
    none when there is little new text, or no helper may start (forked.available)."""
    if len(new) < 2 or sum(map(len, new.values())) < SHARE_BYTES or not forked.available():
        return {}
    mine = theirs_size = 0
    theirs: dict[str, str] = {}
    for path in sorted(new, key=lambda p: (-len(new[p]), p)):
        if theirs_size < mine:
            theirs[path] = new[path]
            theirs_size += len(new[path])
        else:
            mine += len(new[path])
    return theirs


def _black_all(texts: Mapping[str, str]) -> dict[str, str]:
    """The helper's work: black's compiled output for each text it can format (those it cannot are formatted
    again, and reported, by the parent)."""
    out: dict[str, str] = {}
    for path, text in texts.items():
        try:
            out[path] = _black(text, path)
        except Exception:  # noqa: BLE001 - the parent formats it again and reports the error
            continue
    return out


def template_of(path: str) -> str:
    """The template that renders a generated path."""
    for template, target in FILES + DISCOVERY_FILES:
        if re.fullmatch(re.escape(target).replace(re.escape("{package}"), "[^/]+"), path):
            return template
    return "?"


def _first_line(exc: Exception) -> str:
    """The error's first line, bounded: spec text is never echoed at length."""
    lines = str(exc).splitlines()
    return (lines[0] if lines else type(exc).__name__)[:200]

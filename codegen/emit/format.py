"""Format generated Python with black, in-process, then compile it: code that does not compile is never written.

black's output is cached by a hash of its input (emit/cache.py): a text formatted (and compiled) before is not
formatted or compiled again, and black is imported only when some text is new. The templates render text black
leaves as it is, so black makes one pass over each file, not two (tests/test_black_clean.py).

On a cold cache (a fresh CI machine: every file new) the new texts are shared with one forked helper process
when there is enough of them and a second CPU is idle: black is deterministic, so the output is the same whichever process
formats a file, and whatever the helper does not deliver (it failed, or took too long) is formatted here.
"""

from __future__ import annotations

import gc
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..problems import Problem, error
from . import cache
from .files import Content
from .render import DISCOVERY_FILES, FILES

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

SHARE_BYTES = 64_000  # new text below this is formatted here only: a helper would not pay for its start
HELPER_TIMEOUT = 300.0  # seconds the helper may take beyond this process's share before its files are done here


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

    with _helper(theirs) as delivered:
        for path in new.keys() - theirs.keys():  # this process's share (checked_format stores it)
            try:
                done[path] = checked_format(new[path], path)
            except Exception:  # noqa: BLE001 - reported by format_files, which formats it again
                continue
        for path, found in delivered().items():
            cache.store("black", names[path], found)
            done[path] = found
    return done


def _helper_share(new: Mapping[str, str]) -> dict[str, str]:
    """The texts for a helper process: about half of `new` by size (the largest first, each to the lighter side);
    none when there is little new text, no idle second CPU, or no safe fork."""
    if len(new) < 2 or sum(map(len, new.values())) < SHARE_BYTES or not _spare_cpu() or not _can_fork():
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


def _spare_cpu() -> bool:
    """Whether a second CPU is idle enough for a helper: 2+ CPUs this process may use, and a 1-minute load average
    (this process included) at most one less. On a busy machine a helper would only take turns with this process."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return False
    return cpus >= 2 and load <= cpus - 1


def _can_fork() -> bool:
    """Only where fork is the platform's own start method, and from a single thread (a lock another thread holds
    at the fork would stay held in the helper)."""
    import multiprocessing
    import threading

    return (
        sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
    )


@contextmanager
def _helper(texts: Mapping[str, str]) -> Iterator[Callable[[], dict[str, str]]]:
    """A forked process formatting `texts`; yields a function returning what it delivered ({} if it could not be
    started or failed); the helper is always ended on leaving."""
    process: BaseProcess | None = None
    reader: Connection | None = None
    try:
        process, reader = _start(texts)

        def delivered() -> dict[str, str]:
            if reader is None or not reader.poll(HELPER_TIMEOUT):
                return {}
            try:
                found = reader.recv()
            except (EOFError, OSError):
                return {}
            return {path: text for path, text in found.items() if path in texts and isinstance(text, str)}

        yield delivered
    finally:
        if reader is not None:
            reader.close()
        if process is not None:
            process.join(timeout=1.0)
            if process.is_alive():
                process.kill()
                process.join()


def _start(texts: Mapping[str, str]) -> tuple[BaseProcess | None, Connection | None]:
    """The helper process and the end of the pipe it answers on; (None, None) when it cannot be started (no file
    descriptors or processes left, or this process is a daemon, which may have none)."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    try:
        reader, writer = context.Pipe(duplex=False)
    except OSError:
        return None, None
    try:
        process = context.Process(target=_serve, args=(texts, writer), daemon=True)
        process.start()
    except Exception:  # noqa: BLE001 - OSError, or AssertionError in a daemonic process: formatted here instead
        reader.close()
        return None, None
    finally:
        writer.close()
    return process, reader


def _serve(texts: Mapping[str, str], writer: Connection) -> None:
    """The helper: black's compiled output for each text it can format (those it cannot are formatted again, and
    reported, by the parent)."""
    out: dict[str, str] = {}
    for path, text in texts.items():
        try:
            out[path] = _black(text, path)
        except Exception:  # noqa: BLE001 - the parent formats it again and reports the error
            continue
    try:
        writer.send(out)
        writer.close()
    except OSError:  # the parent stopped waiting: it formats these itself
        return


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

"""Format generated Python with black, in-process, then compile it: code that does not compile is never written.

black's output is cached by a hash of its input (emit/cache.py): a text formatted (and compiled) before is not
formatted or compiled again, and black is imported only when some text is new.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..problems import Problem, error
from . import cache
from .files import Content
from .render import FILES


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
    formatted: dict[str, Content] = {}
    problems: list[Problem] = []
    for path, text in files.items():
        if path.endswith(".py") and isinstance(text, str):
            try:
                text = checked_format(text, path)
            except Exception as exc:  # noqa: BLE001 - black and compile raise several types for invalid code
                where = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) else ""
                problems.append(
                    error(
                        f"internal error: generated {path}{where} is not valid Python; template {template_of(path)} "
                        f"(or a custom template) let spec text through unescaped: {_first_line(exc)}"
                    )
                )
        formatted[path] = text
    return formatted, problems


def checked_format(text: str, path: str = "<generated>") -> str:
    """black's output for `text`, compiled: from the cache when this text was formatted and compiled before (only
    output that compiled is cached, so a hit needs neither black nor the compiler; black is imported on a miss)."""
    name = cache.key(BLACK, COMPILED, text)
    found = cache.lookup("black", name)
    if found is None:
        import black

        found = black.format_str(text, mode=black.Mode())
        compile(found, path, "exec", dont_inherit=True)
        cache.store("black", name, found)
    return found


def template_of(path: str) -> str:
    """The template that renders a generated path (server.py: its parts under server/ too)."""
    for template, target in FILES:
        if re.fullmatch(re.escape(target).replace(re.escape("{package}"), "[^/]+"), path):
            return template + (" or server/*.py.jinja" if template == "server.py.jinja" else "")
    return "?"


def _first_line(exc: Exception) -> str:
    """The error's first line, bounded: spec text is never echoed at length."""
    lines = str(exc).splitlines()
    return (lines[0] if lines else type(exc).__name__)[:200]

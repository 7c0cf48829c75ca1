"""Format generated Python with black, in-process, then compile it: code that does not compile is never written."""

from __future__ import annotations

import re
from collections.abc import Mapping

import black

from ..problems import Problem, error
from .render import FILES

MODE = black.Mode()


def format_files(files: Mapping[str, str]) -> tuple[dict[str, str], list[Problem]]:
    formatted: dict[str, str] = {}
    problems: list[Problem] = []
    for path, text in files.items():
        if path.endswith(".py"):
            try:
                text = black.format_str(text, mode=MODE)
                compile(text, path, "exec", dont_inherit=True)
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

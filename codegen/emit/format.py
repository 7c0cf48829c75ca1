"""Format generated Python with black, in-process."""

from __future__ import annotations

from collections.abc import Mapping

import black

from ..problems import Problem, error

MODE = black.Mode()


def format_files(files: Mapping[str, str]) -> tuple[dict[str, str], list[Problem]]:
    formatted: dict[str, str] = {}
    problems: list[Problem] = []
    for path, text in files.items():
        if path.endswith(".py"):
            try:
                text = black.format_str(text, mode=MODE)
            except Exception as exc:  # noqa: BLE001 - black raises several types for invalid code
                problems.append(error(f"generated {path} is not valid Python (check custom templates): {exc}"))
        formatted[path] = text
    return formatted, problems

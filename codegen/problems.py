"""Problems are values: a level, a message and a JSON pointer into the spec.

Every stage returns its result together with the problems it found; the CLI prints them all at once
and decides the exit code. Nothing here raises for bad input.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass


class Level(enum.Enum):
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Problem:
    level: Level
    message: str
    pointer: str = ""  # JSON pointer into the spec ("" is the whole document)
    source: str = ""  # the document the pointer refers to, when it is not the root spec

    def location(self) -> str:
        where = "#" + self.pointer
        return f"{self.source}{where}" if self.source else where

    def __str__(self) -> str:
        return f"{self.level.value}: {self.location()}: {self.message}"


def warning(message: str, pointer: str = "", source: str = "") -> Problem:
    return Problem(Level.WARNING, message, pointer, source)


def error(message: str, pointer: str = "", source: str = "") -> Problem:
    return Problem(Level.ERROR, message, pointer, source)


def escape(token: str | int) -> str:
    """Escape one JSON pointer reference token (RFC 6901)."""
    text = str(token)
    if "~" not in text and "/" not in text:
        return text
    return text.replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def join(base: str, *tokens: str | int) -> str:
    """Append reference tokens to a JSON pointer."""
    if len(tokens) == 1:
        return base + "/" + escape(tokens[0])
    return base + "".join("/" + escape(t) for t in tokens)


def has_errors(problems: Iterable[Problem]) -> bool:
    return any(p.level is Level.ERROR for p in problems)


def sort_key(problem: Problem) -> tuple[str, str, str]:
    return (problem.source, problem.pointer, problem.message)

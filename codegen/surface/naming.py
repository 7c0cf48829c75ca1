"""Deterministic, unique, client-safe names for tools and their arguments.

Tool names match `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`: what Claude, OpenAI and Gemini clients accept.
Argument names match `^[A-Za-z0-9_.-]{1,64}$` (Claude's rule for inputSchema property keys). A name
that has to be changed beyond case and separators is reported; a name that is too long is shortened
at a word boundary with a short hash of the full name, never cut silently.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

MAX_TOOL_NAME = 64
MAX_ARG_NAME = 64
ARG_NAME_RULE = "^[a-zA-Z0-9_.-]{1,64}$"
FOLD = str.maketrans(
    {
        "ß": "ss",
        "æ": "ae",
        "Æ": "AE",
        "ø": "o",
        "Ø": "O",
        "œ": "oe",
        "Œ": "OE",
        "đ": "d",
        "Đ": "D",
        "ł": "l",
        "Ł": "L",
        "þ": "th",
        "Þ": "Th",
        "ð": "d",
        "Ð": "D",
        "ı": "i",
    }
)


LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")
ACRONYM_WORD = re.compile(r"([A-Z]+)([A-Z][a-z])")
NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")


@lru_cache(maxsize=65536)  # pure; a large API names the same arguments, path words and ids thousands of times
def snake_case(text: str) -> str:
    """`getPetById` -> `get_pet_by_id`, `repos/get-content` -> `repos_get_content`."""
    text = ascii_fold(text)
    text = LOWER_UPPER.sub(r"\1_\2", text)
    text = ACRONYM_WORD.sub(r"\1_\2", text)
    return NOT_ALNUM.sub("_", text).strip("_").lower()


def ascii_fold(text: str) -> str:
    """Drop accents (`café` -> `cafe`); characters with no ASCII form are left to the caller's rules."""
    if text.isascii():
        return text
    folded = unicodedata.normalize("NFKD", text.translate(FOLD))
    return folded.encode("ascii", "ignore").decode("ascii")


def fallback_tool_name(method: str, path: str) -> str:
    """A name for an operation without operationId: `GET /pets/{petId}` -> `get_pets_pet_id`."""
    return snake_case(f"{method} {path}") or method.lower()


def shorten(name: str, limit: int, sep: str = "_") -> str:
    """Cut at a word boundary and add 6 hex digits of the full name's hash, so it stays unique."""
    if len(name) <= limit:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:6]
    room = limit - len(digest) - 1
    head = name[:room]
    if sep in head[room // 2 :]:
        head = head[: head.rindex(sep)]
    return f"{head.rstrip(sep + '-.')}{sep}{digest}"


def tool_name(raw: str) -> str:
    name = snake_case(raw)
    if not name:
        name = "operation"
    if not (name[0].isalpha() or name[0] == "_"):
        name = "op_" + name
    return shorten(name, MAX_TOOL_NAME)


@lru_cache(maxsize=8192)
def arg_name(wire: str) -> str:
    """A client-safe argument key for a parameter or body property name, e.g. `filter[status]` -> `filter_status`."""
    if re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", wire):
        return wire
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", ascii_fold(wire)).strip("_.-")
    if not re.search(r"[A-Za-z0-9]", safe):  # nothing readable left (e.g. a name in another script)
        safe = "arg_" + hashlib.sha1(wire.encode()).hexdigest()[:6]
    return shorten(safe, MAX_ARG_NAME)


def unique(name: str, taken: set[str], limit: int) -> str:
    """`name`, or `name_2`, `name_3`, ... (shortened to fit) if taken; adds the result to `taken`."""
    candidate = name
    counter = 2
    while candidate in taken:
        suffix = f"_{counter}"
        candidate = name[: limit - len(suffix)] + suffix
        counter += 1
    taken.add(candidate)
    return candidate


def arg_keys(wires: list[tuple[str, str]]) -> list[str]:
    """Client-safe, unique argument keys for (wire name, location) pairs, deterministically.

    A wire name that is already a valid key keeps it. When two entries want the same key from different
    locations, each gets its location as a suffix (`id__path`, `id__body`); a key still taken gets `_2`,
    `_3`, ... Names that are valid as they are claim their key before names that had to be changed.
    """
    bases = [arg_name(wire) for wire, _ in wires]
    locations: dict[str, set[str]] = {}
    for base, (_, location) in zip(bases, wires):
        locations.setdefault(base, set()).add("body" if location.startswith("body") else location)
    wanted = []
    for base, (_, location) in zip(bases, wires):
        if len(locations[base]) > 1:
            suffix = "__" + ("body" if location.startswith("body") else location)
            base = shorten(base, MAX_ARG_NAME - len(suffix)) + suffix
        wanted.append(base)
    keys: list[str | None] = [None] * len(wires)
    taken: set[str] = set()
    for exact in (True, False):  # unchanged names first
        for index, ((wire, _), want) in enumerate(zip(wires, wanted)):
            if keys[index] is None and (want == wire) == exact:
                keys[index] = unique(want, taken, MAX_ARG_NAME)
    return [k for k in keys if k is not None]

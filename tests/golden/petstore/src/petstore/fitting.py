"""A JSON answer made to fit: projection (`fields`: only the members asked for, in each item of a list or in the
object) and the result budget (the item list cut to whole items, then long strings cut at a word boundary with a
marker, so that the result stays valid JSON and valid against the tool's outputSchema). shaping.py says when.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from typing import Any

from .paging import items_of, with_items

MIN_CUT = 256  # characters: shorter strings are never cut
CUTS = (
    4_096,
    1_024,
    256,
)  # long strings are cut to these lengths in turn until the result fits
SEARCH_BACK = 64  # characters searched back for a space to cut at


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# -- projection -------------------------------------------------------------------------------------------
def project(value: Any, paths: list[str], items: str | None) -> tuple[Any, str]:
    """`value` with only the members at `paths` (in each item when the result is a list); and a note when none
    of the paths was found."""
    tree: dict[str, Any] = {}
    for path in paths[:200]:
        node = tree
        keys = [k for k in str(path).split(".") if k][:16]
        for index, key in enumerate(keys):
            if node.get(key, {}) is None:
                break  # a shorter path already keeps the whole member
            node = node.setdefault(key, {}) if index < len(keys) - 1 else node
            if index == len(keys) - 1:
                node[key] = None
    if not tree:
        return value, ""
    array = items_of(value, items) if items is not None else None
    if array is not None and items is not None:
        picked = [_pick(item, tree) for item in array]
        out = with_items(value, items, picked)
        sample = array[0] if array else None
        found = any(p for p in picked)
    else:
        out = _pick(value, tree)
        sample = value[0] if isinstance(value, list) and value else value
        found = bool(out) or not value
    if found or not isinstance(sample, dict):
        return out, ""
    members = ", ".join(list(sample)[:30])
    return (
        out,
        f"none of the fields {sorted(tree)} was found; the members are: {members}",
    )


def _pick(value: Any, tree: Mapping[str, Any]) -> Any:
    if isinstance(value, list):
        return [_pick(item, tree) for item in value]
    if not isinstance(value, dict):
        return value
    return {
        k: (value[k] if sub is None else _pick(value[k], sub))
        for k, sub in tree.items()
        if k in value
    }


# -- the budget -------------------------------------------------------------------------------------------
def fit(
    value: Any, limit: int, items: str | None
) -> tuple[Any, int | None, int | None, bool]:
    """`value` cut to at most `limit` characters of compact JSON: (value, items shown, items in all, strings cut).
    Whole items first, then long strings; None for the value when nothing brings it under the limit.
    """
    if len(compact(value)) <= limit:
        return value, None, None, False
    path = items if items is not None else ("" if isinstance(value, list) else None)
    array = items_of(value, path) if path is not None else None
    if array is not None and path is not None:
        kept = _whole_items(value, path, array, limit)
        if kept > 0 or not array:
            return with_items(value, path, array[:kept]), kept, len(array), False
    for length in CUTS:
        cut = _cut_strings(value, length)
        if array is not None and path is not None:
            cut_array = items_of(cut, path) or []
            kept = _whole_items(cut, path, cut_array, limit)
            if kept > 0:
                return with_items(cut, path, cut_array[:kept]), kept, len(array), True
        elif len(compact(cut)) <= limit:
            return cut, None, None, True
    smaller = _halve_arrays(_cut_strings(value, CUTS[-1]), limit)
    return smaller, None, None, True


def _whole_items(value: Any, path: str, array: list[Any], limit: int) -> int:
    """How many leading items of `array` fit in `limit` characters with the rest of `value`."""
    used = len(compact(with_items(value, path, [])))
    for index, item in enumerate(array):
        used += len(compact(item)) + (1 if index else 0)
        if used > limit:
            return index
    return len(array)


def cut_text(text: str, length: int) -> str:
    """`text` cut to about `length` characters at a space (else between two characters, never inside a
    character or before a combining mark), with a marker saying how much was left out.
    """
    if len(text) <= max(length, MIN_CUT):
        return text
    end = length
    space = text.rfind(" ", length - SEARCH_BACK, length)
    if space > 0:
        end = space
    while end > 0 and (
        unicodedata.combining(text[end]) or 0xDC00 <= ord(text[end]) <= 0xDFFF
    ):
        end -= 1
    return f"{text[:end]}… [cut: {len(text) - end:,} more characters]"


def _cut_strings(value: Any, length: int, depth: int = 0) -> Any:
    if isinstance(value, str):
        return cut_text(value, length)
    if depth > 100:
        return value
    if isinstance(value, list):
        return [_cut_strings(v, length, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: _cut_strings(v, length, depth + 1) for k, v in value.items()}
    return value


def _halve_arrays(value: Any, limit: int) -> Any:
    """Last resort: the longest array anywhere halved (whole items) until `value` fits; None if it never does."""
    for _ in range(64):
        if len(compact(value)) <= limit:
            return value
        longest = _longest(value, ())
        if longest is None:
            return None
        path, array = longest
        value = _replace(value, path, array[: len(array) // 2])
    return None


def _longest(
    value: Any, at: tuple[Any, ...]
) -> tuple[tuple[Any, ...], list[Any]] | None:
    best: tuple[tuple[Any, ...], list[Any]] | None = (
        (at, value) if isinstance(value, list) and value else None
    )
    children = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value) if isinstance(value, list) else ()
    )
    for key, child in children:
        found = _longest(child, (*at, key)) if len(at) < 32 else None
        if found and (best is None or len(compact(found[1])) > len(compact(best[1]))):
            best = found
    return best


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replace(copy[head], rest, new)
    return copy


# -- the result -------------------------------------------------------------------------------------------

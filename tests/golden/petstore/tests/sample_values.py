"""Leaf values of the sample arguments (samples.py): a value for each string format, a number within a schema's
bounds, a string matching a pattern, the JSON type a schema without `type` describes."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

FORMATS = {
    "date-time": "2024-01-02T03:04:05Z",
    "date": "2024-01-02",
    "time": "03:04:05Z",
    "duration": "P1D",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ip": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "uri": "https://example.com/x",
    "url": "https://example.com/x",
    "iri": "https://example.com/x",
    "uri-reference": "https://example.com/x",
    "iri-reference": "https://example.com/x",
    "uri-template": "https://example.com/{x}",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "json-pointer": "/x",
    "relative-json-pointer": "0",
    "regex": "^x$",
    "byte": "eA==",
    "base64": "eA==",
    "int32": "1",
    "int64": "1",
}


class NoSample(Exception):
    """No valid value could be built for a schema; the message says where and why."""


def constant(value: Any) -> Callable[[], Any]:
    return lambda: value


def kind_of(schema: dict[str, Any]) -> str:
    """The JSON type a schema without `type` describes, from its other keywords."""
    keys = set(schema)
    if keys & {
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "minProperties",
    }:
        return "object"
    if keys & {"items", "prefixItems", "minItems", "maxItems"}:
        return "array"
    if keys & {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    }:
        return "number"
    return "string"


def number(schema: dict[str, Any], integer: bool) -> int | float:
    """1 when allowed, else a value inside the bounds (the nearest integer to 1, or a number between the bounds),
    rounded up to a multiple of multipleOf."""
    bounds = [
        schema.get(k)
        for k in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")
    ]
    low, above, high, below = [
        b if isinstance(b, (int, float)) and not isinstance(b, bool) else None
        for b in bounds
    ]
    lowest = max((b for b in (low, above) if b is not None), default=None)
    highest = min((b for b in (high, below) if b is not None), default=None)
    value: float = 1
    if integer:
        least = (
            low
            if above is None or low is not None and low > above
            else math.floor(above) + 1
        )
        most = (
            high
            if below is None or high is not None and high < below
            else math.ceil(below) - 1
        )
        value = max(value, math.ceil(least)) if least is not None else value
        value = min(value, math.floor(most)) if most is not None else value
    elif (
        lowest is not None
        and (value < lowest or value == above)
        or highest is not None
        and (value > highest or value == below)
    ):
        if lowest is not None and highest is not None:
            value = (lowest + highest) / 2
        else:
            value = (
                lowest + 1
                if lowest is not None
                else highest - 1 if highest is not None else value
            )
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0:
        value = math.ceil(value / step) * step
    return int(value) if integer else value


REGEX_SAMPLES: dict[str, str] = {}


def from_regex(pattern: str, fits: Callable[[str], bool], key: str) -> str:
    """A simple string matching `pattern` that fits: the first that hypothesis generates (derandomized, so the
    same every run) from printable ASCII, else from any printable characters; `key` names the fit (cache). Never
    one ending in a newline: Python's `$` matches before it (hypothesis offers one), a JSON Schema pattern's not.
    """
    key = f"{pattern}\0{key}"
    if key not in REGEX_SAMPLES:
        from hypothesis import HealthCheck, Phase, find, settings, strategies

        options = settings(
            derandomize=True,
            database=None,
            max_examples=200,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        problem = ""
        for alphabet in (
            strategies.characters(min_codepoint=32, max_codepoint=126),
            strategies.characters(exclude_categories=["Cc", "Cs"]),
        ):
            try:
                REGEX_SAMPLES[key] = find(
                    strategies.from_regex(re.compile(pattern), alphabet=alphabet),
                    lambda text: not text.endswith("\n") and fits(text),
                    settings=options,
                )
                break
            except Exception as exc:  # no match found, or a pattern Python cannot read
                problem = type(exc).__name__
        else:
            raise NoSample(f"no string found for pattern {pattern!r} ({problem})")
    return REGEX_SAMPLES[key]

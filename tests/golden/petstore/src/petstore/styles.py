"""Parameter values serialized as the spec's `style` and `explode` say, in the path, the query, a header or a
cookie. Values are percent-encoded per path segment, so no argument can change the path template (`../`, `?`,
`#`, `%2F`; a value that is exactly `.` or `..` is sent as `%2E` or `%2E%2E`), and header values containing CR
or LF are refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from .plans import Arg, ArgumentError

RESERVED = ":/?#[]@!$&'()*+,;="  # kept as-is where a query parameter has allowReserved


NAME_SAFE = "[]$!'()*,;:@/"  # query-safe characters kept in parameter names (`filter[status]`, `$select`)


DELIMITERS = {
    "spaceDelimited": "%20",
    "pipeDelimited": "|",
    "tabDelimited": "%09",
}  # tabDelimited: Swagger 2.0 tsv


# -- serialization styles (OpenAPI 3: parameter style and explode) ----------------------------------
def value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def as_media(value: Any, media_type: str) -> str:
    return (
        value
        if isinstance(value, str) and "json" not in media_type
        else value_text(value)
    )


def _segment(value: Any) -> str:
    """One path segment, fully percent-encoded; `.` and `..` can never become directory moves."""
    encoded = quote(value_text(value), safe="")
    return encoded.replace(".", "%2E") if encoded in (".", "..") else encoded


def path_value(arg: Arg, value: Any) -> str:
    style, explode = arg.style or "simple", arg.explode
    if isinstance(value, Mapping):
        if explode:
            parts = [f"{_segment(k)}={_segment(v)}" for k, v in value.items()]
        else:
            parts = [_segment(x) for kv in value.items() for x in kv]
    elif isinstance(value, list):
        parts = [_segment(v) for v in value]
    else:
        parts = [_segment(value)]
    if not parts:  # an empty list or object is undefined (RFC 6570): nothing is written
        return ""
    if style == "label":
        return "." + ("." if explode else ",").join(parts)
    if style == "matrix":
        if isinstance(value, Mapping) and explode:
            return "".join(f";{p}" for p in parts)
        if isinstance(value, list) and explode:
            return "".join(f";{_segment(arg.name)}={p}" for p in parts)
        return f";{_segment(arg.name)}=" + ",".join(parts)
    return ",".join(parts)


def query_pairs(arg: Arg, value: Any) -> list[str]:
    safe = RESERVED if arg.allow_reserved else ""
    name = quote(arg.name, safe=NAME_SAFE)

    def enc(item: Any) -> str:
        return quote(value_text(item), safe=safe)

    style = arg.style or "form"
    if style == "deepObject" and isinstance(value, Mapping):
        return [f"{name}[{quote(str(k), safe='')}]={enc(v)}" for k, v in value.items()]
    separator = DELIMITERS.get(style, ",")
    if isinstance(value, Mapping):
        if arg.explode:
            return [f"{quote(str(k), safe='')}={enc(v)}" for k, v in value.items()]
        return [f"{name}=" + separator.join(enc(x) for kv in value.items() for x in kv)]
    if isinstance(value, list):
        if arg.explode:
            return [f"{name}={enc(v)}" for v in value]
        return [f"{name}=" + separator.join(enc(v) for v in value)]
    return [f"{name}={enc(value)}"]


def header_value(arg: Arg, value: Any) -> str:
    if isinstance(value, Mapping):
        sep = "=" if arg.explode else ","
        text = ",".join(f"{k}{sep}{value_text(v)}" for k, v in value.items())
    elif isinstance(value, list):
        text = ",".join(value_text(v) for v in value)
    else:
        text = value_text(value)
    if "\r" in text or "\n" in text:
        raise ArgumentError(
            f"{arg.arg}: header values cannot contain line breaks (CR or LF)"
        )
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        raise ArgumentError(f"{arg.arg}: header values must be Latin-1 text") from None
    return text


def cookie_value(arg: Arg, value: Any) -> str:
    """form style: items (and an object's keys and values) joined by commas, each percent-encoded."""
    if isinstance(value, Mapping):
        items = [x for kv in value.items() for x in kv]
    elif isinstance(value, list):
        items = list(value)
    else:
        items = [value]
    texts = [value_text(v) for v in items]
    if any(c in t for t in texts for c in "\r\n;"):
        raise ArgumentError(f"{arg.arg}: cookie values cannot contain ';', CR or LF")
    return ",".join(quote(t, safe="!#$&'()*+-./:<=>?@[]^_`{|}~") for t in texts)

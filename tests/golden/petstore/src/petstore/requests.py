"""Turn a tool's arguments into the HTTP request its operation describes.

Each tool has a route (routes.json, written by the generator): the method, the path template and, for
every argument, its name on the wire, where it goes and how the spec says to serialize it. Values are
percent-encoded per path segment, so no argument can change the path template (`../`, `?`, `#`,
`%2F`), and header values containing CR or LF are refused.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

RESERVED = ":/?#[]@!$&'()*+,;="  # kept as-is where a query parameter has allowReserved


class ArgumentError(ValueError):
    """An argument that cannot be sent as the spec describes; the message names the field."""


@dataclass(frozen=True, slots=True)
class Arg:
    arg: str  # the key in the tool's arguments
    name: str  # the name on the wire
    location: str  # path | query | header | cookie | body
    style: str
    explode: bool
    allow_reserved: bool
    content_type: str | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Arg:
        return cls(
            arg=data["arg"],
            name=data["name"],
            location=data["in"],
            style=data.get("style", ""),
            explode=data.get("explode", False),
            allow_reserved=data.get("allowReserved", False),
            content_type=data.get("contentType"),
        )


@dataclass(frozen=True, slots=True)
class Body:
    media_type: str
    arg: (
        str | None
    )  # the argument holding the whole body; None: the body's properties are arguments
    required: bool


@dataclass(frozen=True, slots=True)
class Route:
    method: str
    path: str
    args: tuple[Arg, ...]
    body: Body | None
    accept: str | None
    wrap_result: bool

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Route:
        body = data.get("body")
        return cls(
            method=data["method"],
            path=data["path"],
            args=tuple(Arg.from_json(a) for a in data["args"]),
            body=(
                Body(body["mediaType"], body["arg"], body["required"]) if body else None
            ),
            accept=data.get("accept"),
            wrap_result=data.get("wrapResult", False),
        )


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    target: str  # path and query, relative to the base URL
    headers: dict[str, str]
    content: bytes | None


def build_request(route: Route, arguments: Mapping[str, Any]) -> Request:
    path = route.path
    query: list[str] = []
    headers: dict[str, str] = {}
    cookies: list[str] = []
    body_fields: dict[str, Any] = {}
    for arg in route.args:
        if arg.arg not in arguments or arguments[arg.arg] is None:
            continue
        value = arguments[arg.arg]
        if arg.content_type is not None:
            value = _as_media(value, arg.content_type)
        if arg.location == "path":
            path = path.replace("{" + arg.name + "}", _path_value(arg, value))
        elif arg.location == "query":
            query.extend(_query_pairs(arg, value))
        elif arg.location == "header":
            headers[arg.name] = _header_value(arg, value)
        elif arg.location == "cookie":
            cookies.append(f"{arg.name}={_cookie_value(arg, value)}")
        else:
            body_fields[arg.name] = value
    if cookies:
        headers["Cookie"] = "; ".join(cookies)
    if route.accept:
        headers["Accept"] = route.accept
    content = None
    if route.body is not None:
        body_value: Any = (
            arguments.get(route.body.arg) if route.body.arg else (body_fields or None)
        )
        if body_value is not None:
            content = encode_body(route.body.media_type, body_value)
            headers["Content-Type"] = route.body.media_type
    target = path + ("?" + "&".join(query) if query else "")
    return Request(route.method, target, headers, content)


def encode_body(media_type: str, value: Any) -> bytes:
    base = media_type.split(";")[0].strip().lower()
    if base == "application/json" or base.endswith("+json") or "json" in base:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8"
        )
    if base == "application/x-www-form-urlencoded":
        if not isinstance(value, Mapping):
            raise ArgumentError("body: a form body must be an object")
        pairs = []
        for key, item in value.items():
            items = item if isinstance(item, list) else [item]
            pairs += [
                f"{quote(str(key), safe='')}={quote(_text(v), safe='')}" for v in items
            ]
        return "&".join(pairs).encode("ascii")
    if isinstance(value, str) and (base.startswith("text/") or base.endswith("xml")):
        return value.encode("utf-8")
    if isinstance(
        value, str
    ):  # binary bodies travel as base64 text in a JSON tool call
        try:
            return base64.b64decode(value, validate=True)
        except ValueError:
            raise ArgumentError("body: expected base64-encoded content") from None
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


# -- serialization styles (OpenAPI 3: parameter style and explode) ----------------------------------
def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _as_media(value: Any, media_type: str) -> str:
    return (
        value if isinstance(value, str) and "json" not in media_type else _text(value)
    )


def _segment(value: Any) -> str:
    """One path segment, fully percent-encoded; `.` and `..` can never become directory moves."""
    encoded = quote(_text(value), safe="")
    return encoded.replace(".", "%2E") if encoded in (".", "..") else encoded


def _path_value(arg: Arg, value: Any) -> str:
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
    if style == "label":
        return "." + ("." if explode else ",").join(parts)
    if style == "matrix":
        if isinstance(value, Mapping) and explode:
            return "".join(f";{p}" for p in parts)
        if isinstance(value, list) and explode:
            return "".join(f";{_segment(arg.name)}={p}" for p in parts)
        return f";{_segment(arg.name)}=" + ",".join(parts)
    return ",".join(parts)


def _query_pairs(arg: Arg, value: Any) -> list[str]:
    safe = RESERVED if arg.allow_reserved else ""
    name = quote(arg.name, safe="[]")

    def enc(item: Any) -> str:
        return quote(_text(item), safe=safe)

    style = arg.style or "form"
    if style == "deepObject" and isinstance(value, Mapping):
        return [f"{name}[{quote(str(k), safe='')}]={enc(v)}" for k, v in value.items()]
    if isinstance(value, Mapping):
        if arg.explode and style == "form":
            return [f"{quote(str(k), safe='')}={enc(v)}" for k, v in value.items()]
        return [f"{name}=" + ",".join(enc(x) for kv in value.items() for x in kv)]
    if isinstance(value, list):
        if arg.explode:
            return [f"{name}={enc(v)}" for v in value]
        separator = {"spaceDelimited": "%20", "pipeDelimited": "|"}.get(style, ",")
        return [f"{name}=" + separator.join(enc(v) for v in value)]
    return [f"{name}={enc(value)}"]


def _header_value(arg: Arg, value: Any) -> str:
    if isinstance(value, Mapping):
        sep = "=" if arg.explode else ","
        text = ",".join(f"{k}{sep}{_text(v)}" for k, v in value.items())
    elif isinstance(value, list):
        text = ",".join(_text(v) for v in value)
    else:
        text = _text(value)
    if "\r" in text or "\n" in text:
        raise ArgumentError(
            f"{arg.arg}: header values cannot contain line breaks (CR or LF)"
        )
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        raise ArgumentError(f"{arg.arg}: header values must be Latin-1 text") from None
    return text


def _cookie_value(arg: Arg, value: Any) -> str:
    text = (
        ",".join(_text(v) for v in value) if isinstance(value, list) else _text(value)
    )
    if any(c in text for c in "\r\n;"):
        raise ArgumentError(f"{arg.arg}: cookie values cannot contain ';', CR or LF")
    return quote(text, safe="!#$%&'()*+-./:<=>?@[]^_`{|}~")

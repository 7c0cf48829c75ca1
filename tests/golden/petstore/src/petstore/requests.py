"""Turn a tool's arguments into the HTTP request its operation describes.

Each tool has a route (routes.json, written by the generator): the method, the path template and, for
every argument, its name on the wire, where it goes and how the spec says to serialize it. Values are
percent-encoded per path segment, so no argument can change the path template (`../`, `?`, `#`,
`%2F`; a value that is exactly `.` or `..` is sent as `%2E` or `%2E%2E`), and header values containing
CR or LF are refused. A multipart part's Content-Type is the one its file argument gives, else the
first concrete type of the spec's `encoding.contentType` (which may be a list with wildcards).
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

RESERVED = ":/?#[]@!$&'()*+,;="  # kept as-is where a query parameter has allowReserved
NAME_SAFE = "[]$!'()*,;:@/"  # query-safe characters kept in parameter names (`filter[status]`, `$select`)
MULTIPART_DELIMITERS = {
    "spaceDelimited": " ",
    "pipeDelimited": "|",
    "tabDelimited": "\t",
}  # not exploded arrays
DELIMITERS = {
    "spaceDelimited": "%20",
    "pipeDelimited": "|",
    "tabDelimited": "%09",
}  # tabDelimited: Swagger 2.0 tsv


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
    file: bool = (
        False  # a multipart file part: {"content": base64, "filename"?, "contentType"?}
    )
    nullable: bool = (
        False  # a JSON body property whose schema allows null: null is sent, not omitted
    )

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
            file=data.get("file", False),
            nullable=data.get("nullable", False),
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
    fixed: tuple[
        tuple[str, str, str], ...
    ] = ()  # (header | query | cookie, name, value) sent every time
    restore: Mapping[str, Any] | None = (
        None  # arguments reshaped for a client profile (restore.py)
    )

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
            fixed=tuple(
                (f["in"], f["name"], f["value"]) for f in data.get("fixed", ())
            ),
            restore=data.get("restore"),
        )


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    target: str  # path and query, relative to the base URL
    headers: dict[str, str]
    content: bytes | None


def file_shorthand(route: Route, arguments: dict[str, Any]) -> dict[str, Any]:
    """`arguments` with each multipart file given as a plain base64 string turned into {"content": string}
    (plus null for each field a client profile made required only to be sent as null: see restore.py).
    """
    files = [arg.arg for arg in route.args if arg.file and arg.arg in arguments]
    if not files:
        return arguments
    out = dict(arguments)
    for key in files:
        value = out[key]
        shape = (route.restore or {}).get(key) or {}
        if isinstance(value, str):
            out[key] = _file_part(value, shape)
        elif isinstance(value, list):
            out[key] = [
                (
                    _file_part(item, shape.get("items") or {})
                    if isinstance(item, str)
                    else item
                )
                for item in value
            ]
    return out


def _file_part(content: str, shape: Mapping[str, Any]) -> dict[str, Any]:
    nulls = {
        name: None
        for name, field in (shape.get("properties") or {}).items()
        if field.get("absent")
    }
    return {**nulls, "content": content}


def concrete_type(media_type: str | None) -> str | None:
    """The first concrete media type of an `encoding.contentType` ("image/png, image/*" -> "image/png")."""
    for candidate in (media_type or "").split(","):
        candidate = candidate.strip()
        if candidate and "*" not in candidate.split(";")[0]:
            return candidate
    return None


def build_request(route: Route, arguments: Mapping[str, Any]) -> Request:
    # a path key's fragment (`/#Action=List`) is never sent: the values it fixes are in route.fixed;
    # its query (`/rest?method=photos.get`, `/alerts?lat={lat}`) is sent first, as written
    path, _, key_query = route.path.partition("#")[0].partition("?")
    key_query = quote(key_query, safe=RESERVED + "%{}")
    query: list[str] = []
    headers: dict[str, str] = {}
    cookies: list[str] = []
    for location, name, text in route.fixed:
        if location == "header":
            headers[name] = text
        elif location == "query":
            query.append(f"{quote(name, safe=NAME_SAFE)}={quote(text, safe='')}")
        else:
            cookies.append(f"{name}={quote(text, safe='')}")
    fields: list[tuple[Arg, Any]] = []  # the body's properties, when they are arguments
    for arg in route.args:
        if arg.arg not in arguments or (
            arguments[arg.arg] is None and not arg.nullable
        ):
            continue  # null means "not given", except for a JSON body property that may be null
        value = arguments[arg.arg]
        if arg.content_type is not None and arg.location != "body":
            value = _as_media(value, arg.content_type)
        if arg.location == "path":
            segment = _path_value(arg, value)
            if not segment:
                raise ArgumentError(f"{arg.arg}: a path parameter cannot be empty")
            path = path.replace("{" + arg.name + "}", segment)
            key_query = key_query.replace("{" + arg.name + "}", segment)
        elif arg.location == "query":
            query.extend(_query_pairs(arg, value))
        elif arg.location == "header":
            headers[arg.name] = _header_value(arg, value)
        elif arg.location == "cookie":
            cookies.append(f"{arg.name}={_cookie_value(arg, value)}")
        else:
            fields.append((arg, value))
    if cookies:
        headers["Cookie"] = "; ".join(cookies)
    if route.accept:
        headers["Accept"] = route.accept
    content = None
    if route.body is not None:
        if route.body.arg is not None:
            whole = arguments.get(route.body.arg)
            if whole is not None:
                content, headers["Content-Type"] = encode_body(
                    route.body.media_type, whole
                )
        elif (
            fields or route.body.required
        ):  # a required body is sent even when none of its properties are given
            content, headers["Content-Type"] = encode_fields(
                route.body.media_type, fields
            )
    # `name={x}` pairs of the key's query whose x is not a path parameter (declared in query): the argument is sent
    key_query = "&".join(
        pair
        for pair in key_query.split("&")
        if pair and not ("{" in pair and "}" in pair)
    )
    query = ([key_query] if key_query else []) + query
    target = path + ("?" + "&".join(query) if query else "")
    return Request(route.method, target, headers, content)


def media_kind(media_type: str) -> str:
    base = media_type.split(";")[0].strip().lower()
    if (
        base == "application/json"
        or base.endswith("+json")
        or (base.startswith("application/") and "json" in base)
    ):
        return "json"
    if base == "application/x-www-form-urlencoded":
        return "form"
    if base == "multipart/form-data":
        return "multipart"
    if (
        base.startswith("text/")
        or base.endswith(("xml", "+yaml", "/yaml", "csv"))
        or base
        in (
            "application/javascript",
            "application/graphql",
        )
    ):
        return "text"
    return "binary"


def encode_fields(media_type: str, fields: list[tuple[Arg, Any]]) -> tuple[bytes, str]:
    """A body whose properties are arguments: JSON object, form or multipart."""
    kind = media_kind(media_type)
    if kind == "form":
        return _form(fields), media_type
    if kind == "multipart":
        return _multipart(fields)
    return _json({arg.name: value for arg, value in fields}), media_type


def encode_body(media_type: str, value: Any) -> tuple[bytes, str]:
    """A body given whole, as the `body` argument: (bytes, Content-Type)."""
    kind = media_kind(media_type)
    if kind in ("form", "multipart"):
        if not isinstance(value, Mapping):
            raise ArgumentError(f"body: a {media_type} body must be an object")
        fields = [
            (Arg(str(k), str(k), "body", "form", True, False, None), v)
            for k, v in value.items()
        ]
        return encode_fields(media_type, fields)
    if kind == "text":
        return _text(value).encode("utf-8"), media_type
    if kind == "binary":
        if not isinstance(value, str):
            raise ArgumentError("body: expected the content as a base64 string")
        return _base64("body", value), (
            "application/octet-stream" if "*" in media_type else media_type
        )
    return _json(value), media_type


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _base64(field: str, value: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        raise ArgumentError(f"{field}: expected base64-encoded content") from None


def _form(fields: list[tuple[Arg, Any]]) -> bytes:
    """application/x-www-form-urlencoded: each property as a query parameter of its encoding's style."""
    pairs: list[str] = []
    for arg, value in fields:
        if arg.content_type is not None and not isinstance(value, str):
            value = _text(value)
        pairs.extend(_query_pairs(arg, value))
    return "&".join(pairs).encode("ascii")


def _multipart(fields: list[tuple[Arg, Any]]) -> tuple[bytes, str]:
    """multipart/form-data: one part per property (per item for arrays); files from base64."""
    boundary = secrets.token_hex(16)
    chunks: list[bytes] = []

    def part(
        name: str, data: bytes, content_type: str | None, filename: str | None = None
    ) -> None:
        disposition = f'form-data; name="{_quote_name(name)}"'
        if filename is not None:
            disposition += f'; filename="{_quote_name(filename)}"'
        head = f"--{boundary}\r\nContent-Disposition: {disposition}\r\n"
        if content_type:
            head += f"Content-Type: {content_type}\r\n"
        chunks.append(head.encode("utf-8") + b"\r\n" + data + b"\r\n")

    for arg, value in fields:
        if (
            isinstance(value, list)
            and not arg.file
            and arg.style
            and not arg.explode
            and not _is_json(arg.content_type)
        ):
            if all(
                not isinstance(v, (Mapping, list)) for v in value
            ):  # e.g. Swagger 2.0 csv: one part "a,b"
                value = MULTIPART_DELIMITERS.get(arg.style, ",").join(
                    _text(v) for v in value
                )
        items = (
            value
            if isinstance(value, list) and (arg.file or not _is_json(arg.content_type))
            else [value]
        )
        for item in items:
            if arg.file:
                if isinstance(item, str):
                    item = {"content": item}
                if not isinstance(item, Mapping) or not isinstance(
                    item.get("content"), str
                ):
                    raise ArgumentError(
                        arg.arg
                        + ': a file is {"content": base64, "filename"?, "contentType"?}'
                    )
                data = _base64(arg.arg, item["content"])
                media = (
                    item.get("contentType")
                    or concrete_type(arg.content_type)
                    or "application/octet-stream"
                )
                filename = item.get("filename")
                part(
                    arg.name,
                    data,
                    _header_text(arg.arg, str(media)),
                    str(filename) if filename else arg.name,
                )
            elif isinstance(item, (Mapping, list)):
                part(
                    arg.name,
                    _json(item),
                    concrete_type(arg.content_type) or "application/json",
                )
            else:
                part(
                    arg.name,
                    _text(item).encode("utf-8"),
                    concrete_type(arg.content_type),
                )
    chunks.append(f"--{boundary}--\r\n".encode("ascii"))
    return b"".join(chunks), f"multipart/form-data; boundary={boundary}"


def _is_json(media_type: str | None) -> bool:
    media = concrete_type(media_type)
    return media is not None and media_kind(media) == "json"


def _quote_name(name: str) -> str:
    """A name or file name inside a Content-Disposition header (as browsers escape them)."""
    return name.replace("\r", "%0D").replace("\n", "%0A").replace('"', "%22")


def _header_text(field: str, text: str) -> str:
    if "\r" in text or "\n" in text:
        raise ArgumentError(
            f"{field}: header values cannot contain line breaks (CR or LF)"
        )
    return text


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


def _query_pairs(arg: Arg, value: Any) -> list[str]:
    safe = RESERVED if arg.allow_reserved else ""
    name = quote(arg.name, safe=NAME_SAFE)

    def enc(item: Any) -> str:
        return quote(_text(item), safe=safe)

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
    """form style: items (and an object's keys and values) joined by commas, each percent-encoded."""
    if isinstance(value, Mapping):
        items = [x for kv in value.items() for x in kv]
    elif isinstance(value, list):
        items = list(value)
    else:
        items = [value]
    texts = [_text(v) for v in items]
    if any(c in t for t in texts for c in "\r\n;"):
        raise ArgumentError(f"{arg.arg}: cookie values cannot contain ';', CR or LF")
    return ",".join(quote(t, safe="!#$&'()*+-./:<=>?@[]^_`{|}~") for t in texts)

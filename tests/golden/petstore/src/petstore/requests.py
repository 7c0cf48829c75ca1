"""Turn a tool's arguments into the HTTP request its operation describes.

Each tool has a route (routes.json, written by the generator; plans.py reads it): the method, the path template
and, for every argument, its name on the wire, where it goes and how the spec says to serialize it (styles.py).
The body is encoded by its media type (bodies.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from .bodies import encode_body, encode_fields
from .plans import Arg, ArgumentError, Request, Route
from .styles import (
    NAME_SAFE,
    RESERVED,
    as_media,
    cookie_value,
    header_value,
    path_value,
    query_pairs,
)


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
            value = as_media(value, arg.content_type)
        if arg.location == "path":
            segment = path_value(arg, value)
            if not segment:
                raise ArgumentError(f"{arg.arg}: a path parameter cannot be empty")
            path = path.replace("{" + arg.name + "}", segment)
            key_query = key_query.replace("{" + arg.name + "}", segment)
        elif arg.location == "query":
            query.extend(query_pairs(arg, value))
        elif arg.location == "header":
            headers[arg.name] = header_value(arg, value)
        elif arg.location == "cookie":
            cookies.append(f"{arg.name}={cookie_value(arg, value)}")
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

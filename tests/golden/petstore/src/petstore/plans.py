"""The request plans routes.json holds, as the server reads them: for each tool the method, the path template,
every argument's name on the wire, where it goes and how the spec serializes it, and the body; and the request
built from a plan (requests.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


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

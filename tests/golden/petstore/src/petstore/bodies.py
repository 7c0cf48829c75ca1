"""Request bodies by media type: JSON, form fields, multipart (files included), text and binary. A multipart
part's Content-Type is the one its file argument gives, else the first concrete type of the spec's
`encoding.contentType` (which may be a list with wildcards).
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Mapping
from typing import Any

from .plans import Arg, ArgumentError
from .styles import query_pairs, value_text

MULTIPART_DELIMITERS = {
    "spaceDelimited": " ",
    "pipeDelimited": "|",
    "tabDelimited": "\t",
}  # not exploded arrays


def concrete_type(media_type: str | None) -> str | None:
    """The first concrete media type of an `encoding.contentType` ("image/png, image/*" -> "image/png")."""
    for candidate in (media_type or "").split(","):
        candidate = candidate.strip()
        if candidate and "*" not in candidate.split(";")[0]:
            return candidate
    return None


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
        return value_text(value).encode("utf-8"), media_type
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
            value = value_text(value)
        pairs.extend(query_pairs(arg, value))
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
                    value_text(v) for v in value
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
                    value_text(item).encode("utf-8"),
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

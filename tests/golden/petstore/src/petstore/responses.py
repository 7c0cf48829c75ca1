"""Turn an upstream HTTP answer into an MCP tool result.

JSON becomes text plus structured content (when the tool declares an output schema); text/* stays
text; images become image content; other binary bodies become an embedded resource with their media
type; an empty body is a short success text. A failure status is an `isError` result carrying the
status and the (truncated) body, so the model can read what went wrong; so is a body that a JSON
content type announces but that is not JSON ("upstream sent invalid JSON", with its first bytes).

The size cap (`limit`) is measured on what reaches the client: the UTF-8 bytes of the result's text,
or of the base64 text of an image or binary answer. A longer answer is cut there, with a note.

Clients check structured content against the tool's output schema and raise when it does not match.
So the structured content is checked here first: when the API's answer is off-spec, the members that
do not match are left out of the structured content (all of it, if the answer is not an object) and
the text content, which always carries the full answer, says so.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import mcp.types as types

from .upstream import Reply

ERROR_BODY_LIMIT = 4_000  # characters of an error body passed on to the model
PREVIEW_BYTES = 200  # bytes of an invalid JSON body quoted in the error
DEFAULT_LIMIT = 1_000_000  # bytes of result text (Settings.max_response_bytes)

# (tool name, structured value) -> top-level keys that fail the output schema; None: all of it
Checker = Callable[[str, dict[str, Any]], "set[str] | None"]


def failure(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


def is_json(media_type: str) -> bool:
    return (
        media_type == "application/json"
        or media_type.endswith("+json")
        or (media_type.startswith("application/") and "json" in media_type)
    )


def to_result(
    tool: str,
    reply: Reply,
    *,
    structured: bool,
    wrap: bool,
    check: Checker | None = None,
    limit: int = DEFAULT_LIMIT,
) -> types.CallToolResult:
    """`structured`: the tool declares an output schema; `wrap`: it is {"result": <body>}; `limit`: the cap."""
    if reply.status >= 400:
        return http_error(reply)
    empty: dict[str, Any] | None = {} if structured else None
    content_type = reply.headers.get("content-type", "")
    base = content_type.split(";")[0].strip().lower()
    body = reply.body
    if not body:
        text = f"HTTP {reply.status} {reply.reason}".rstrip() + ": success, no content."
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=empty,
        )
    if is_json(base) and not reply.truncated:
        text = _decode(
            body, content_type
        )  # in its declared charset (a Latin-1 JSON answer is still JSON)
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            return invalid_json(reply, exc)
        if _size(text) <= limit:
            if not structured:
                return types.CallToolResult(
                    content=[types.TextContent(type="text", text=text)]
                )
            value, dropped = _structured(tool, data, wrap, check)
            if dropped:
                text += f"\n[note: {dropped}]"
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)],
                structured_content=value,
            )
        # longer than the cap: cut as text below
    if (
        base.startswith("image/")
        and not reply.truncated
        and _base64_size(len(body)) <= limit
    ):
        return types.CallToolResult(
            content=[
                types.ImageContent(
                    type="image", data=base64.b64encode(body).decode(), mime_type=base
                )
            ],
            structured_content=empty,
        )
    if (
        base.startswith("text/")
        or is_json(base)
        or base.endswith("xml")
        or (not base and _is_text(body))
        or (
            base in ("", "application/octet-stream")
            and _is_text(body)
            and not reply.truncated
        )
    ):
        text = _decode(body, content_type)
        shown = _cut(text, limit)
        whole = (
            reply.total if reply.truncated else _size(text)
        )  # bytes of the whole answer as text, when known
        note = _note(whole, _size(shown)) if shown != text or reply.truncated else ""
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=shown + note)],
            structured_content=empty,
        )
    kept = body[: limit // 4 * 3]  # its base64 text fits the cap
    blob = types.BlobResourceContents(
        uri=f"upstream://response{reply.path}",
        mime_type=base or "application/octet-stream",
        blob=base64.b64encode(kept).decode(),
    )
    content: list[types.ContentBlock] = [
        types.EmbeddedResource(type="resource", resource=blob)
    ]
    if len(kept) < len(body) or reply.truncated:
        content.append(
            types.TextContent(type="text", text=_note(reply.total, len(kept)).strip())
        )
    return types.CallToolResult(content=content, structured_content=empty)


def invalid_json(reply: Reply, exc: Exception) -> types.CallToolResult:
    """A body its JSON content type announces that is not JSON: an error quoting its first bytes."""
    reason = (
        "nested too deeply"
        if isinstance(exc, RecursionError)
        else str(exc).split(":")[0][:100]
    )
    preview = _printable(reply.body[:PREVIEW_BYTES].decode("utf-8", errors="replace"))
    more = f" (of {len(reply.body):,})" if len(reply.body) > PREVIEW_BYTES else ""
    status = f"HTTP {reply.status} {reply.reason}".rstrip()
    return failure(
        f"{status}: upstream sent invalid JSON ({reason}) under Content-Type "
        f"{_printable(reply.headers.get('content-type', '')[:100])}. Its first {min(len(reply.body), PREVIEW_BYTES)} "
        f"bytes{more}: {preview}"
    )


def http_error(reply: Reply) -> types.CallToolResult:
    text = reply.body.decode(
        _charset(reply.headers.get("content-type", "")), errors="replace"
    )
    if len(text) > ERROR_BODY_LIMIT or reply.truncated:
        size = f"{reply.total:,} bytes" if reply.total else "a longer body"
        text = text[:ERROR_BODY_LIMIT] + f"\n[truncated: {size} in all]"
    message = f"HTTP {reply.status} {reply.reason}".rstrip()
    return failure(
        f"{message} from the API:\n{text}"
        if text.strip()
        else f"{message} from the API."
    )


def _structured(
    tool: str, data: Any, wrap: bool, check: Checker | None
) -> tuple[dict[str, Any], str]:
    """The structured content for `data`, and a note when parts were left out (off-spec answer)."""
    value: dict[str, Any] = (
        data if not wrap and isinstance(data, dict) else {"result": data}
    )
    if check is None:
        return value, ""
    failing = check(tool, value)
    if failing is None:
        return (
            {},
            "the answer does not match the tool's output schema; it is given in full above only",
        )
    if not failing:
        return value, ""
    kept = {k: v for k, v in value.items() if k not in failing}
    if check(tool, kept):  # still off-spec (should not happen with tolerant schemas)
        return (
            {},
            "the answer does not match the tool's output schema; it is given in full above only",
        )
    listed = ", ".join(sorted(failing))
    return (
        kept,
        f"{listed} did not match the tool's output schema and are given above only",
    )


def _size(text: str) -> int:
    """UTF-8 bytes of `text` (4 per character at most: counted without encoding when that is enough)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", errors="replace"))


def _base64_size(raw: int) -> int:
    return (raw + 2) // 3 * 4


def _cut(text: str, limit: int) -> str:
    """`text` cut to at most `limit` UTF-8 bytes, on a character boundary."""
    if len(text) <= limit // 4 or _size(text) <= limit:
        return text
    return text.encode("utf-8", errors="replace")[:limit].decode(
        "utf-8", errors="ignore"
    )


def _note(whole: int | None, shown: int) -> str:
    size = f"{whole:,} bytes" if whole else "more bytes"
    return f"\n[truncated: the response has {size}; only the first {shown:,} are shown]"


def _printable(text: str) -> str:
    """`text` on one line: control characters (line breaks included) written as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"')
            try:
                "".encode(charset)
            except LookupError:
                return "utf-8"
            return charset
    return "utf-8"


def _decode(body: bytes, content_type: str) -> str:
    """The body as text in its declared charset, else UTF-8: what httpx's `response.text` gives, without
    its per-response parse of the header with the email package (the largest cost of a call's own work).
    """
    charset = "utf-8"
    for part in content_type.split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset" and value.strip().strip("\"'"):
            charset = value.strip().strip("\"'")
    try:
        return body.decode(charset, errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def _is_text(body: bytes) -> bool:
    head = body[:1024]
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # a multi-byte character cut at the end is fine
            return False
    return b"\x00" not in head

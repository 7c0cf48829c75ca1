"""Turn an upstream HTTP response into an MCP tool result.

JSON becomes text plus structured content (when the tool declares an output schema); text/* stays
text; images become image content; other binary bodies become an embedded resource with their media
type. A failure status is an `isError` result carrying the status and the (truncated) body, so the
model can read what went wrong.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import mcp.types as types

ERROR_BODY_LIMIT = 4_000  # characters of an error body passed on to the model


def failure(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


def is_json(content_type: str) -> bool:
    base = content_type.split(";")[0].strip().lower()
    return (
        base == "application/json"
        or base.endswith("+json")
        or (base.startswith("application/") and "json" in base)
    )


def to_result(
    response: httpx.Response, *, structured: bool, wrap: bool, limit: int
) -> types.CallToolResult:
    """`structured`: the tool declares an output schema; `wrap`: it is {"result": <body>}."""
    if response.is_error:
        return http_error(response)
    content_type = response.headers.get("content-type", "")
    body = response.content
    if not body:
        text = f"HTTP {response.status_code} {response.reason_phrase}: success, no content."
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content={} if structured else None,
        )
    truncated = len(body) > limit
    note = f"\n[truncated: the response has {len(body):,} bytes; the first {limit:,} are shown]"
    base = content_type.split(";")[0].strip().lower()
    if is_json(content_type) and not truncated:
        try:
            data = response.json()
        except ValueError:
            data = None
        else:
            text = response.text
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)],
                structured_content=_structured(data, wrap) if structured else None,
            )
    if base.startswith("image/") and not truncated:
        return types.CallToolResult(
            content=[
                types.ImageContent(
                    type="image", data=base64.b64encode(body).decode(), mime_type=base
                )
            ],
            structured_content={} if structured else None,
        )
    if (
        base.startswith("text/")
        or is_json(content_type)
        or base.endswith("xml")
        or _is_text(body)
    ):
        text = body[:limit].decode(response.encoding or "utf-8", errors="replace")
        return types.CallToolResult(
            content=[
                types.TextContent(type="text", text=text + (note if truncated else ""))
            ],
            structured_content={} if structured else None,
        )
    blob = types.BlobResourceContents(
        uri=str(response.request.url) if response.request else "upstream:response",
        mime_type=base or "application/octet-stream",
        blob=base64.b64encode(body[:limit]).decode(),
    )
    content: list[types.ContentBlock] = [
        types.EmbeddedResource(type="resource", resource=blob)
    ]
    if truncated:
        content.append(types.TextContent(type="text", text=note.strip()))
    return types.CallToolResult(
        content=content, structured_content={} if structured else None
    )


def http_error(response: httpx.Response) -> types.CallToolResult:
    text = response.text if response.content else ""
    if len(text) > ERROR_BODY_LIMIT:
        text = (
            text[:ERROR_BODY_LIMIT]
            + f"\n[truncated: {len(response.content):,} bytes in all]"
        )
    message = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
    return failure(f"{message}\n{text}" if text else message)


def _structured(data: Any, wrap: bool) -> dict[str, Any]:
    if not wrap and isinstance(data, dict):
        return data
    return {"result": data}


def _is_text(body: bytes) -> bool:
    try:
        body[:1024].decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\x00" not in body[:1024]


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)

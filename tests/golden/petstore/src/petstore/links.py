"""Resource links to a whole answer: stateless, so any replica of the server can read them.

A result cut to the budget (or a big text or file) may carry a `resource_link` whose URI encodes the call itself:
`mcp-result://call/<tool>?arguments=<the call's arguments as JSON, percent-encoded>`. Reading it
(`resources/read`) runs that call again, without the result budget (the size cap still applies). Only
read-only (GET) tools get links, so reading one never changes anything; nothing is stored between requests.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import mcp.types as types

SCHEME = "mcp-result"
MAX_URI = 8_192  # characters: a call whose arguments need more gets no link


def result_uri(tool: str, arguments: Mapping[str, Any]) -> str | None:
    """The URI that reads the whole answer of this call; None when it would be too long."""
    encoded = quote(
        json.dumps(arguments, ensure_ascii=False, separators=(",", ":")), safe=""
    )
    uri = f"{SCHEME}://call/{quote(tool, safe='')}?arguments={encoded}"
    return uri if len(uri) <= MAX_URI else None


def parse_uri(uri: str) -> tuple[str, dict[str, Any]] | None:
    """(tool, arguments) of a result URI; None when `uri` is not one."""
    if len(uri) > MAX_URI:
        return None
    parts = urlsplit(uri)
    if (
        parts.scheme != SCHEME
        or parts.netloc != "call"
        or not parts.path.startswith("/")
    ):
        return None
    raw = parse_qs(parts.query).get("arguments", ["{}"])[-1]
    try:
        arguments = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return (parts.path[1:], arguments) if isinstance(arguments, dict) else None


def link(uri: str, tool: str, mime_type: str | None) -> types.ResourceLink:
    return types.ResourceLink(
        type="resource_link",
        uri=uri,
        name=f"{tool} (whole answer)",
        description="The whole answer of this call, without the result budget (read it to run the call again).",
        mime_type=mime_type,
    )


def contents(
    uri: str, result: types.CallToolResult
) -> list[types.TextResourceContents | types.BlobResourceContents]:
    """A tool result (read with `whole`: its `_meta` names the media type) as the contents of `resources/read`."""
    out: list[types.TextResourceContents | types.BlobResourceContents] = []
    mime_type = str((result.meta or {}).get("mimeType") or "text/plain")
    for block in result.content:
        if isinstance(block, types.TextContent):
            out.append(
                types.TextResourceContents(
                    uri=uri, mime_type=mime_type, text=block.text
                )
            )
        elif isinstance(block, types.ImageContent):
            out.append(
                types.BlobResourceContents(
                    uri=uri, mime_type=block.mime_type, blob=block.data
                )
            )
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, types.BlobResourceContents):
                out.append(
                    types.BlobResourceContents(
                        uri=uri, mime_type=resource.mime_type, blob=resource.blob
                    )
                )
            else:
                out.append(
                    types.TextResourceContents(
                        uri=uri, mime_type=resource.mime_type, text=resource.text
                    )
                )
    return out or [types.TextResourceContents(uri=uri, mime_type="text/plain", text="")]


def size(result: types.CallToolResult) -> int:
    """Characters of the result as the client gets them (text, or base64 of images and files)."""
    total = 0
    for block in result.content:
        if isinstance(block, types.TextContent):
            total += len(block.text)
        elif isinstance(block, types.ImageContent):
            total += len(block.data)
        elif isinstance(block, types.EmbeddedResource) and isinstance(
            block.resource, types.BlobResourceContents
        ):
            total += len(block.resource.blob)
    return total

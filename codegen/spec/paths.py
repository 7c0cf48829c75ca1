"""Checks of path templates (the keys of `paths`) before any operation under them becomes a tool.

A literal `.` or `..` segment (also percent-encoded, `%2e`) is resolved away by URL normalization in
clients, proxies and servers, so `/files/{name}/../admin` reaches `/files/admin` or another route the
spec never declared: such path templates are refused, and their operations are skipped.
"""

from __future__ import annotations

from urllib.parse import unquote


def dot_segment(path: str) -> str | None:
    """The first `.` or `..` segment of a path template (as written), or None when it has none."""
    for segment in path.split("/"):
        if unquote(segment) in (".", ".."):
            return segment
    return None

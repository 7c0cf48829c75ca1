"""Request bodies and responses: the media type a tool sends and expects, with its schema and examples."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .media import examples, json_media_rank, pick_media_type
from .model import Body, Response, Schema
from .refs import Ref, RefError
from .walker import Walker, text


class BodiesAndResponses(Walker):
    def body(self, node: Any, at: Ref) -> Body | None:
        node, at = self.deref(node, at, "request body")
        if not isinstance(node, dict):
            raise self.skip("requestBody is not an object", at)
        content = node.get("content")
        if not isinstance(content, dict) or not content:
            self.warn("requestBody has no content; no body is sent", at)
            return None
        media_type = pick_media_type(content)
        media = content[media_type] if isinstance(content[media_type], dict) else {}
        encoding: dict[str, Any] = media["encoding"] if isinstance(media.get("encoding"), dict) else {}
        styles = []
        for key, value in sorted(encoding.items()):
            if isinstance(value, dict) and ("style" in value or "explode" in value):
                style = value.get("style") if isinstance(value.get("style"), str) else "form"
                explode = value.get("explode") if isinstance(value.get("explode"), bool) else style == "form"
                styles.append((str(key), str(style), bool(explode)))
        return Body(
            media_type=media_type,
            schema=(
                Schema(self.canonical(media["schema"]), at.child("content", media_type, "schema"))
                if "schema" in media
                else None
            ),
            required=node.get("required") is True,
            description=text(node.get("description")).strip(),
            alternatives=tuple(sorted(m for m in content if m != media_type)),
            encoding=tuple(
                sorted(
                    (str(k), str(v["contentType"]))
                    for k, v in encoding.items()
                    if isinstance(v, dict) and isinstance(v.get("contentType"), str)
                )
            ),
            at=at,
            examples=examples(media),
            encoding_styles=tuple(styles),
        )

    def responses(self, node: Any, at: Ref) -> Iterator[Response]:
        if not isinstance(node, dict):
            if node is not None:
                self.warn("'responses' is not an object", at)
            return
        for status in sorted(node, key=str):
            raw, raw_at = node[status], at.child(status)
            found = self.shared(f"response {status}", raw, raw_at, lambda: self.response(status, raw, raw_at))
            if found is not None:
                yield found

    def response(self, status: Any, node: Any, at: Ref) -> Response | None:
        """The response for `status` (`node`, found at `at`); None when it is not one."""
        try:
            response, response_at = self.resolver.resolve(node, at)
        except RefError as exc:
            self.warn(f"response {status}: {exc}", exc.at)
            return None
        if not isinstance(response, dict):
            return None
        content = response.get("content")
        media_type = None
        schema = None
        if isinstance(content, dict) and content:
            media_type = pick_media_type(content)
            media = content[media_type]
            if isinstance(media, dict) and "schema" in media:
                schema = Schema(self.canonical(media["schema"]), response_at.child("content", media_type, "schema"))
        media_types = tuple(sorted(content, key=lambda m: (json_media_rank(m), m))) if isinstance(content, dict) else ()
        headers = response.get("headers")
        return Response(
            str(status).upper(),
            text(response.get("description")).strip(),
            media_type,
            schema,
            media_types,
            response_at,
            tuple(sorted({str(h).lower() for h in headers})) if isinstance(headers, dict) else (),
        )

"""Content-Encoding decoded while the answer streams in, with a running count.

A decoder that turns each received chunk into all of its decompressed bytes at once lets a few
kilobytes of `gzip, gzip` become gigabytes before any size check. Here the raw body is decoded layer
by layer, at most CHUNK bytes of output per step, and every stage (the bytes received and each
layer's output) is counted: reading stops as soon as the decoded body passes its limit, whatever the
compression ratio. Decoded: gzip (x-gzip), deflate (zlib-wrapped or raw) and identity, at most
MAX_LAYERS of them stacked; anything else is refused with a message saying which encoding it was.
`read_bounded` reads an httpx answer's body this way.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

MAX_LAYERS = 2  # stacked encodings decoded; an answer encoded more times is refused
CHUNK = 65_536  # bytes of output per decompression step
ACCEPT_ENCODING = "gzip, deflate"  # what this server asks for (and all it decodes)


class DecodingError(Exception):
    """The answer cannot be decoded; the message says why (never quoting the body)."""


def codings(header: str | None) -> list[str]:
    """The encodings of a Content-Encoding header, in the order they were applied (identity left out)."""
    found = [part.strip().lower() for part in (header or "").split(",")]
    found = [coding for coding in found if coding and coding != "identity"]
    if len(found) > MAX_LAYERS:
        raise DecodingError(
            f"the API's answer is encoded {len(found)} times (Content-Encoding: {', '.join(found)[:100]}); "
            f"at most {MAX_LAYERS} layers are decoded"
        )
    for coding in found:
        if coding not in ("gzip", "x-gzip", "deflate"):
            raise DecodingError(
                f"the API's answer uses Content-Encoding {coding[:40]!r}, which this server does not decode"
            )
    return found


class _Layer:
    """One encoding: input pushed in, output pulled out CHUNK bytes at a time."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self.raw_fallback = (
            coding == "deflate"
        )  # "deflate" is zlib-wrapped, but some servers send it raw
        self._inflater = zlib.decompressobj(
            zlib.MAX_WBITS | 16 if coding != "deflate" else zlib.MAX_WBITS
        )
        self._tail = b""  # input not decompressed yet
        self._started = False

    def push(self, data: bytes) -> None:
        self._tail = self._tail + data if self._tail else data

    def pull(self) -> bytes:
        """Up to CHUNK bytes of output; b"" when the input pushed so far is used up."""
        if (
            not self._tail or self._inflater.eof
        ):  # after the end of the stream: trailing bytes are ignored
            self._tail = b""
            return b""
        try:
            out = self._inflater.decompress(self._tail, CHUNK)
        except zlib.error:
            if self.raw_fallback and not self._started:
                self.raw_fallback = False
                self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                return self.pull()
            raise DecodingError(
                f"the API's answer is not valid {self.coding} data"
            ) from None
        self._started = True
        self._tail = self._inflater.unconsumed_tail
        return out

    def check_end(self) -> None:
        if self._started and not self._inflater.eof:
            raise DecodingError(
                f"the API's answer ends in the middle of its {self.coding} data"
            )


class BoundedDecoder:
    """Decodes a body given in raw chunks, keeping at most `limit` + 1 bytes of it.

    `feed` returns True once the decoded body has passed `limit` (or a stage has produced more than
    `work_limit` bytes, which only an answer built to waste time does): the caller stops reading and
    the body is reported as truncated."""

    def __init__(self, content_encoding: str | None, limit: int) -> None:
        self.layers = [_Layer(coding) for coding in reversed(codings(content_encoding))]
        self.limit = limit
        self.work_limit = 2 * limit + CHUNK
        self.counts = [0] * (
            len(self.layers) + 1
        )  # bytes into each layer, then out of the last
        self.chunks: list[bytes] = []
        self.size = 0
        self.full = False

    def feed(self, raw: bytes) -> bool:
        if not self.full:
            self._push(0, raw)
        return self.full

    def body(self) -> bytes:
        """The decoded body (at most `limit` bytes); at the end of a complete answer, checks it was whole."""
        if not self.full:
            for layer in self.layers:
                layer.check_end()
        return b"".join(self.chunks)[: self.limit]

    def _push(self, index: int, data: bytes) -> None:
        self.counts[index] += len(data)
        if self.counts[index] > self.work_limit and index < len(self.layers):
            self.full = True
            return
        if index == len(self.layers):
            self.chunks.append(data)
            self.size += len(data)
            self.full = self.size > self.limit
            return
        layer = self.layers[index]
        layer.push(data)
        while not self.full:
            piece = layer.pull()
            if not piece:
                return
            self._push(index + 1, piece)


async def read_bounded(
    response: httpx.Response, limit: int
) -> tuple[bytes, int | None, bool]:
    """The decoded body, at most `limit` bytes of it; (body, full decoded size when known, truncated)."""
    if (
        response.is_stream_consumed
    ):  # built from bytes in memory (a test's transport): httpx decoded it already
        whole = response.content
        return whole[:limit], len(whole), len(whole) > limit
    decoder = BoundedDecoder(response.headers.get("content-encoding"), limit)
    async for chunk in response.aiter_raw():
        if decoder.feed(chunk):
            length = response.headers.get("content-length")
            total = (
                int(length)
                if length and length.isdigit() and not decoder.layers
                else None
            )
            return decoder.body(), total, True
    body = decoder.body()
    return body, len(body), False

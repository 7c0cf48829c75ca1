"""Hostile answers from the API: decompression bombs, encodings, the size cap, invalid JSON, one deadline for
the whole call. (Hostile arguments and bodies from the client: test_hostile_input.py.)
"""

from __future__ import annotations

import base64
import gzip
import threading
import time
import zlib
from collections.abc import AsyncIterator

import anyio
import httpx
import mcp.types as types
import pytest
from mcp import Client

from petstore.cli import parse_args, settings_from
from petstore.settings import ENV_PREFIX, Settings
from support import (
    SECRETS,
    Answer,
    Recorder,
    arguments_for,
    idempotent,
    server,
    target,
    text_of,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),
]


class Chunks(httpx.AsyncByteStream):
    """A streamed body (as from a socket): `chunks` one by one, `pause` seconds apart; counts what was pulled."""

    def __init__(self, chunks: list[bytes], pause: float = 0.0) -> None:
        self.chunks, self.pause, self.pulled = chunks, pause, 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            if self.pause:
                await anyio.sleep(self.pause)
            self.pulled += 1
            yield chunk


def gzip_bomb(gigabytes: int = 1) -> bytes:
    """`gzip, gzip` of `gigabytes` GB of zeros, a few KB long (the inner stream is one repeated block)."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    head = deflater.compress(block) + deflater.flush(zlib.Z_FULL_FLUSH)
    repeated = deflater.compress(block) + deflater.flush(zlib.Z_FULL_FLUSH)
    return gzip.compress(head + repeated * (1024 * gigabytes - 1), 9)


def streamed(
    body: bytes, headers: dict[str, str], size: int = 512, pause: float = 0.0
) -> tuple[Answer, Chunks]:
    """An answer whose body streams in `size`-byte chunks (httpx does not read or decode it beforehand)."""
    stream = Chunks([body[i : i + size] for i in range(0, len(body), size)], pause)
    return (lambda request: httpx.Response(200, headers=headers, stream=stream)), stream


async def test_stacked_gzip_bomb_stops_at_the_cap() -> None:
    bomb = gzip_bomb(1)
    assert len(bomb) < 10_000
    tool = target()
    answer, stream = streamed(
        bomb,
        {"content-type": "application/octet-stream", "content-encoding": "gzip, gzip"},
    )
    started = time.monotonic()
    async with Client(
        server(Recorder(answer=answer), max_response_bytes=10_000), mode="legacy"
    ) as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert not result.is_error and "[truncated: the response has more bytes" in text_of(
        result
    ), text_of(result)
    block = result.content[0]
    assert isinstance(block, types.EmbeddedResource) and isinstance(
        block.resource, types.BlobResourceContents
    )
    assert (
        base64.b64decode(block.resource.blob) == bytes(7_500)
        and len(block.resource.blob) <= 10_000
    )
    assert (
        stream.pulled < len(stream.chunks) and time.monotonic() - started < 5
    )  # stopped early, not 1 GB later


async def test_encodings_are_decoded_or_refused() -> None:
    tool = target()
    plain = b"plain words"
    text = {"content-type": "text/plain"}
    cases: list[tuple[bytes, str, str]] = [
        (gzip.compress(plain), "gzip", "plain words"),
        (gzip.compress(zlib.compress(plain)), "deflate, gzip", "plain words"),
        (
            zlib.compress(plain)[2:-4],
            "deflate",
            "plain words",
        ),  # raw deflate, as some servers send it
        (
            gzip.compress(gzip.compress(gzip.compress(plain))),
            "gzip, gzip, gzip",
            "encoded 3 times",
        ),
        (
            b"\x0b\x02\x80hi\x03",
            "br",
            "uses Content-Encoding 'br', which this server does not decode",
        ),
        (b"\x1f\x8b not gzip at all", "gzip", "is not valid gzip data"),
        (gzip.compress(plain)[:-12], "gzip", "ends in the middle of its gzip data"),
    ]
    for body, encoding, expected in cases:
        answer, _ = streamed(body, text | {"content-encoding": encoding}, size=7)
        async with Client(server(Recorder(answer=answer)), mode="legacy") as client:
            result = await client.call_tool(tool["name"], arguments_for(tool))
        if expected == "plain words":
            assert not result.is_error and text_of(result) == expected, (
                encoding,
                text_of(result),
            )
        else:
            assert result.is_error and expected in text_of(result), (
                encoding,
                text_of(result),
            )


async def test_size_cap_counts_what_reaches_the_client() -> None:
    tool = target()
    latin = Recorder(
        status=200, body=b"\xe9" * 800, content_type="text/plain; charset=latin-1"
    )
    async with Client(server(latin, max_response_bytes=1000), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    # 800 bytes upstream, 1,600 as UTF-8 text: cut at 1,000 bytes of text (500 characters)
    shown = text_of(result).split("\n[truncated")[0]
    assert (
        shown == "é" * 500
        and "[truncated: the response has 1,600 bytes; only the first 1,000 are shown]"
        in text_of(result)
    )
    image = Recorder(status=200, body=b"\x89PNG" + bytes(896), content_type="image/png")
    async with Client(server(image, max_response_bytes=1000), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    # 900 bytes upstream are 1,200 of base64: too long to be an image; the first 750 bytes as a blob, with a note
    block = result.content[0]
    assert isinstance(block, types.EmbeddedResource) and isinstance(
        block.resource, types.BlobResourceContents
    )
    assert len(
        block.resource.blob
    ) == 1000 and "only the first 750 are shown" in text_of(result)
    fits = Recorder(status=200, body=b"\x89PNG" + bytes(596), content_type="image/png")
    async with Client(server(fits, max_response_bytes=1000), mode="legacy") as client:
        assert isinstance(
            (await client.call_tool(tool["name"], arguments_for(tool))).content[0],
            types.ImageContent,
        )


async def test_invalid_json_is_a_tool_error_quoting_its_first_bytes() -> None:
    tool = target()
    secret = next(iter(SECRETS.values()), "no-secret")
    cases = [
        (
            b'{"id": 1, "name": ' + secret.encode() + b"\n" + b"x" * 500,
            "upstream sent invalid JSON",
        ),
        (b"[" * 100_000, "upstream sent invalid JSON (nested too deeply)"),
    ]
    for body, expected in cases:
        recorder = Recorder(
            status=200, body=body, content_type="application/json; charset=utf-8"
        )
        async with Client(server(recorder), mode="legacy") as client:
            result = await client.call_tool(tool["name"], arguments_for(tool))
        text = text_of(result)
        assert (
            result.is_error
            and expected in text
            and "first 200 bytes" in text
            and len(text) < 600
        ), text
        assert "\n" not in text.split("bytes")[-1] and (
            secret not in text or not SECRETS
        )


def without_background_compiles() -> None:
    """Each server compiles its argument and result checks in a thread 0.5 s after its first tools/list: a test
    that times a call cancels those of earlier servers (or waits for a running one), which would compete with it.
    """
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()
            thread.join(timeout=60)


async def test_timeout_is_one_deadline_for_the_whole_call() -> None:
    tool = target()
    # the body trickles for ~40 s, one byte per 0.02 s: a timeout per read would never fire, one deadline does
    drip, stream = streamed(
        b'{"a": "' + b"x" * 2000 + b'"}',
        {"content-type": "application/json"},
        size=1,
        pause=0.02,
    )
    without_background_compiles()
    started = time.monotonic()
    # 3 s: on a slow, busy machine the call's own start (a large API's checks) has taken over 1 s before any byte
    async with Client(
        server(Recorder(answer=drip), timeout=3.0), mode="legacy"
    ) as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    elapsed = time.monotonic() - started
    assert result.is_error and "within the total timeout of 3 s" in text_of(
        result
    ), text_of(result)
    assert 5 < stream.pulled < 2000 and elapsed < 8, (
        stream.pulled,
        elapsed,
    )  # cut mid-body, at the deadline
    busy = Recorder(
        answer=lambda request: httpx.Response(503, headers={"Retry-After": "0.1"})
    )
    without_background_compiles()
    started = time.monotonic()
    async with Client(server(busy, timeout=0.35, retries=10), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert (
        result.is_error and time.monotonic() - started < 3
    )  # the retries' waits count too
    assert len(busy.requests) <= 4 if idempotent(tool) else len(busy.requests) == 1


def test_timeout_flag_and_variables() -> None:
    assert settings_from(parse_args(["--timeout", "7.5"]), {}).timeout == 7.5
    assert settings_from(parse_args([]), {f"{ENV_PREFIX}_TIMEOUT": "12"}).timeout == 12
    assert (
        settings_from(parse_args([]), {f"{ENV_PREFIX}_TOTAL_TIMEOUT": "40"}).timeout
        == 40
    )  # the older name
    both = {f"{ENV_PREFIX}_TIMEOUT": "12", f"{ENV_PREFIX}_TOTAL_TIMEOUT": "40"}
    assert settings_from(parse_args(["--timeout", "3"]), both).timeout == 3
    for wrong in ("0", "-1", "nan", "inf", "soon"):
        with pytest.raises(SystemExit):
            parse_args(["--timeout", wrong])
        with pytest.raises(SystemExit):
            Settings.from_env({f"{ENV_PREFIX}_TIMEOUT": wrong})

"""Bounded reads of one document: a regular file or an http(s) URL, never more than the policy allows.

A file must be a regular file (a FIFO or a device such as /dev/zero is refused before anything is read,
so a read cannot hang or run forever). A URL is fetched with one deadline for the whole exchange,
redirects followed on the same origin only, and the body capped in bytes after decompression (one
gzip or deflate layer; other or stacked encodings are refused).
"""

from __future__ import annotations

import os
import stat
import time
import zlib
from pathlib import Path
from urllib.parse import urljoin, urlparse

from .policy import MB, LoadError, ReadPolicy, file_path, origin

CHUNK = 64 * 1024


def read(uri: str, policy: ReadPolicy) -> bytes:
    scheme = urlparse(uri).scheme
    if scheme in ("http", "https"):
        return read_url(uri, policy)
    if scheme == "file":
        return read_file(file_path(uri), policy)
    raise LoadError(f"unsupported URI scheme in {uri!r} (use a file path or an http(s) URL)")


def _too_big(what: object, policy: ReadPolicy) -> LoadError:
    return LoadError(f"{what} is larger than {policy.max_bytes // MB} MB, the limit for one document (--max-spec-mb)")


def read_file(path: Path, policy: ReadPolicy) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise LoadError(f"no such file: {path}") from None
    except OSError as exc:
        raise LoadError(f"cannot read {path}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a FIFO, socket or device)"
            raise LoadError(f"cannot read {path}: it is {kind}; only regular files are read")
        if info.st_size > policy.max_bytes:
            raise _too_big(path, policy)
        chunks: list[bytes] = []
        size = 0
        while size <= policy.max_bytes:  # a file that grows while read (or lies about its size) stops here too
            chunk = os.read(fd, CHUNK)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > policy.max_bytes:
            raise _too_big(path, policy)
        return b"".join(chunks)
    except OSError as exc:
        raise LoadError(f"cannot read {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


class _Body:
    """Collects a response body, decompressing one gzip/deflate layer, capped in decoded bytes."""

    def __init__(self, uri: str, encoding: str, policy: ReadPolicy) -> None:
        self.uri, self.policy = uri, policy
        layers = [part.strip().lower() for part in encoding.split(",") if part.strip()]
        layers = [layer for layer in layers if layer != "identity"]
        if len(layers) > 1 or (layers and layers[0] not in ("gzip", "x-gzip", "deflate")):
            raise LoadError(f"cannot fetch {uri}: unsupported Content-Encoding {encoding!r}")
        self.inflate = zlib.decompressobj(47 if layers and "gzip" in layers[0] else zlib.MAX_WBITS) if layers else None
        self.chunks: list[bytes] = []
        self.size = 0

    def add(self, data: bytes) -> None:
        if self.inflate is None:
            self._keep(data)
            return
        while data:
            room = self.policy.max_bytes + 1 - self.size
            try:
                out = self.inflate.decompress(data, max(room, 1))
            except zlib.error:
                raise LoadError(f"cannot fetch {self.uri}: the compressed body is corrupt") from None
            self._keep(out)
            data = self.inflate.unconsumed_tail

    def _keep(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.policy.max_bytes:
            raise _too_big(self.uri, self.policy)
        self.chunks.append(data)

    def bytes(self) -> bytes:
        return b"".join(self.chunks)


def read_url(uri: str, policy: ReadPolicy) -> bytes:
    import httpx  # only needed for URLs

    deadline = time.monotonic() + policy.timeout
    current = uri
    try:
        with httpx.Client(follow_redirects=False, headers={"Accept-Encoding": "gzip, deflate"}) as client:
            for _ in range(policy.max_redirects + 1):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                with client.stream("GET", current, timeout=httpx.Timeout(remaining)) as response:
                    if response.is_redirect:
                        target = urljoin(current, response.headers.get("location", ""))
                        if origin(target) != origin(current):
                            scheme, host, port = origin(target)
                            raise LoadError(
                                f"cannot fetch {uri}: it redirects to another origin ({scheme}://{host}:{port}); "
                                "redirects are followed on the same origin only"
                            )
                        current = target
                        continue
                    if response.status_code >= 400:
                        raise LoadError(f"cannot fetch {uri}: HTTP {response.status_code}")
                    declared = response.headers.get("content-length", "")
                    if declared.isdigit() and int(declared) > policy.max_bytes:
                        raise _too_big(uri, policy)
                    body = _Body(uri, response.headers.get("content-encoding", ""), policy)
                    for chunk in response.iter_raw(CHUNK):
                        body.add(chunk)
                        if time.monotonic() > deadline:
                            break
                    else:
                        return body.bytes()
                    break
            else:
                raise LoadError(f"cannot fetch {uri}: more than {policy.max_redirects} redirects")
    except httpx.TimeoutException:
        pass
    except httpx.HTTPError as exc:
        raise LoadError(f"cannot fetch {uri}: {type(exc).__name__}: {exc}") from None
    raise LoadError(f"cannot fetch {uri}: no complete answer within {policy.timeout:g} s")

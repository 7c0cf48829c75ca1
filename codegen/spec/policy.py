"""What reading the spec may touch, and how much: the `$ref` sandbox and the limits of every read.

Rules (the root spec itself is read wherever it is; these apply to the documents its `$ref`s name):
- a local spec's refs may read files only inside the spec's folder and below (`ref_root` widens it); the
  check is made on the real path, so a symlink cannot lead out;
- http(s) refs are not fetched unless `allow_remote`, except refs of a spec loaded from a URL that stay on
  the spec's own origin (scheme, host and port); a spec loaded from a URL never reads local files;
- every read is bounded: bytes per document, documents in all, seconds per read, redirects (same origin);
- parsing is bounded: nesting depth, and the nodes YAML aliases may add.

Messages name the ref and the rule, never the content of what was read.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse

MB = 1024 * 1024


class LoadError(Exception):
    """A document cannot be read or parsed; the message says which and why (and never quotes it)."""

    def __init__(self, message: str, pointer: str = "") -> None:
        super().__init__(message)
        self.pointer = pointer  # where in the document the problem is, when known


@dataclass(frozen=True, slots=True)
class ReadPolicy:
    ref_root: Path | None = None  # local refs may read below this folder; None: the spec's own folder
    allow_remote: bool = False  # fetch http(s) refs of any origin
    max_bytes: int = 50 * MB  # per document
    max_documents: int = 500  # external documents in all, so a ref cycle across URLs ends
    timeout: float = 30.0  # seconds for one read (connect, redirects and the whole body)
    max_redirects: int = 5  # each to the same origin only
    max_depth: int = 200  # nesting of objects and arrays (later stages recurse on it)
    max_alias_nodes: int = 1_000_000  # nodes YAML aliases may add by expansion (an alias bomb adds billions)


def is_remote(uri: str) -> bool:
    return urlparse(uri).scheme in ("http", "https")


def origin(uri: str) -> tuple[str, str, int | None]:
    parsed = urlparse(uri)
    port = parsed.port if parsed.port is not None else {"http": 80, "https": 443}.get(parsed.scheme)
    return parsed.scheme, (parsed.hostname or "").lower(), port


def file_path(uri: str) -> Path:
    path = urlparse(uri).path
    if os.name != "nt" and not path.startswith("//"):
        local = unquote(path)
        if local.isascii():  # url2pathname's answer on every Python version, without importing urllib.request
            return Path(local)  # (http.client, email, ssl: more than a small spec's whole read)
    from urllib.request import url2pathname

    return Path(url2pathname(path))


def ref_folder(root_uri: str, policy: ReadPolicy) -> Path | None:
    """The real folder local refs may read below; None for a spec loaded from a URL."""
    if is_remote(root_uri):
        return None
    folder = policy.ref_root if policy.ref_root is not None else file_path(root_uri).parent
    return Path(os.path.realpath(folder))


def refusal(target: str, root_uri: str, policy: ReadPolicy) -> str | None:
    """Why the rules forbid reading the document `target` for the spec at `root_uri`; None when allowed."""
    scheme = urlparse(target).scheme
    if scheme in ("http", "https"):
        if policy.allow_remote or (is_remote(root_uri) and origin(target) == origin(root_uri)):
            return None
        if is_remote(root_uri):
            return "it is on another origin than the spec, and remote refs are not fetched (--allow-remote-refs)"
        return "remote refs are not fetched (--allow-remote-refs allows them)"
    if scheme != "file":
        return f"the URI scheme {scheme!r} is not supported (refs name files or http(s) URLs)"
    folder = ref_folder(root_uri, policy)
    if folder is None:
        return "a spec loaded from a URL cannot read local files"
    real = Path(os.path.realpath(file_path(target)))
    if real != folder and folder not in real.parents:
        return f"it is outside {folder}, the folder refs may read (--ref-root widens it)"
    return None


def relative_name(uri: str, root_uri: str) -> str:
    """`uri` as seen from the root spec ("" for the root itself): a relative path (`schemas/order.yaml`, `../common.yaml`) for a
    document beside it, the URL's path for one on the spec's own origin, else the URL itself. It does not
    depend on where the spec lives, so names derived from it are the same on every machine."""
    if uri == root_uri:
        return ""  # the root spec itself, whatever its file name
    if is_remote(uri) != is_remote(root_uri) or (is_remote(uri) and origin(uri) != origin(root_uri)):
        return uri
    base = PurePosixPath(urlparse(root_uri).path).parent
    target = urlparse(uri)
    relative = posixpath.relpath(target.path or "/", str(base) or "/")
    return relative + (f"?{target.query}" if target.query else "")

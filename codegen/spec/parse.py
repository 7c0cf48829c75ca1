"""Bytes -> JSON data model, YAML or JSON, within the policy's parser limits.

YAML is scanned as an event stream first (no node graph, no recursion): nesting deeper than the limit,
an alias to a node still open (a recursive structure), or aliases that expand to more nodes than the
limit (an alias bomb) are refused there, each with the JSON pointer where it happens, before anything
is constructed. JSON nesting is checked the same way. Error messages never quote the document.
"""

from __future__ import annotations

import codecs
import json
import re
import sys
import threading
from dataclasses import dataclass, field
from functools import cache
from types import FrameType
from typing import Any

from ..problems import escape
from .policy import LoadError, ReadPolicy


@cache
def _loader() -> Any:
    """The safe YAML loader, keeping timestamps as strings (JSON has no dates); PyYAML is imported only for YAML."""
    import yaml

    class Loader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
        pass

    Loader.yaml_implicit_resolvers = {
        key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return Loader


def parse(data: bytes, uri: str, policy: ReadPolicy) -> Any:
    document = _plain_json(data, policy)
    if document is not None:
        return document
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LoadError(f"{uri} is not UTF-8 text") from None
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            document, shallow = _loads(text, policy.max_depth)
        except RecursionError:
            raise _too_deep(uri, policy, _json_pointer_at_depth(text, policy.max_depth)) from None
        except json.JSONDecodeError as exc:
            if not uri.endswith((".yaml", ".yml")):
                raise LoadError(f"{uri}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
        else:
            if not shallow and _depth_exceeds(document, policy.max_depth):
                raise _too_deep(uri, policy, _json_pointer_at_depth(text, policy.max_depth))
            return _scrub(document) if SURROGATE_ESCAPE.search(text) else document
    import yaml

    try:
        _scan_yaml(text, uri, policy)
        document = _jsonable(yaml.load(text, Loader=_loader()))  # noqa: S506 - a safe loader
        return _scrub(document) if SURROGATE_ESCAPE.search(text) else document
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        reason = getattr(exc, "problem", None) or type(exc).__name__
        raise LoadError(f"{uri}: invalid YAML{where}: {reason}") from None
    except RecursionError:  # not expected after the scan; a safety net
        raise LoadError(f"{uri}: nested too deeply to read") from None


def _plain_json(data: bytes, policy: ReadPolicy) -> Any:
    """The document of JSON text read through its ASCII form (_ascii_text), when that is sure to give what reading
    the text as it is gives; None otherwise (then, and for every error, it is read as it is, for the same message)."""
    body = data[len(codecs.BOM_UTF8) :] if data.startswith(codecs.BOM_UTF8) else data
    if not body.lstrip().startswith((b"{", b"[")):
        return None
    text = _ascii_text(body)
    if text is None:
        return None
    try:
        document, shallow = _loads(text, policy.max_depth)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return None
    if not shallow and _depth_exceeds(document, policy.max_depth):
        return None
    return _scrub(document) if SURROGATE_ESCAPE_BYTES.search(body) else document


_ASCII = bytes(range(128))
_ASTRAL = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")  # the first bytes of a character above U+FFFF
FEW_OTHERS = 4096  # non-ASCII bytes: above this, text is read as it is


def _ascii_text(body: bytes) -> str | None:
    """UTF-8 JSON text that holds a character above U+FFFF, with each non-ASCII character written as its `\\u`
    escape: the same document to json.loads, in a quarter of the memory and read faster. A str holds every
    character in the width of its widest: one emoji makes GitHub's 13 MB spec a 52 MB str, an ASCII one is a byte
    a character. None where that does not pay (no such character: decoding is as fast; many non-ASCII bytes) or
    the escapes could change what is read: bytes that are not UTF-8, a non-ASCII character right after a backslash
    (escaped, it would read as an escaped backslash and a `u`)."""
    if not any(lead in body for lead in _ASTRAL):
        return None
    others = body.translate(None, _ASCII)
    if len(others) > FEW_OTHERS:
        return None
    starts = sorted(at for lead in set(others) if lead >= 0xC0 for at in _positions(body, bytes((lead,))))
    pieces: list[bytes] = []
    done = 0
    for at in starts:
        lead = body[at]
        end = at + (2 if lead < 0xE0 else 3 if lead < 0xF0 else 4)
        if body[at - 1 : at] == b"\\":
            return None
        try:
            character = body[at:end].decode("utf-8")
        except UnicodeDecodeError:
            return None
        pieces += (body[done:at], json.dumps(character).encode("ascii")[1:-1])
        done = end
    pieces.append(body[done:])
    try:
        return b"".join(pieces).decode("ascii")
    except UnicodeDecodeError:  # a continuation byte with no character before it
        return None


def _positions(body: bytes, byte: bytes) -> list[int]:
    found: list[int] = []
    at = body.find(byte)
    while at >= 0:
        found.append(at)
        at = body.find(byte, at + 1)
    return found


# CPython before 3.12 counts the JSON parser's nesting and Python's calls against one limit (sys.getrecursionlimit);
# later versions count the parser's against a fixed limit of their own
_ONE_LIMIT = sys.implementation.name == "cpython" and sys.version_info < (3, 12)


def _loads(text: str, limit: int) -> tuple[Any, bool]:
    """json.loads(text), and whether no container in it is `limit` levels deep is known already (else it is to be
    walked: _depth_exceeds). Where the parser counts its nesting against the recursion limit, that limit is lowered
    for the parse to `limit` - 1 levels above this call: a parse that ends without RecursionError nested less than
    that, and a deeper text is parsed again as usual. One thread only: the limit is the interpreter's."""
    if _ONE_LIMIT and threading.active_count() == 1:
        frames = 0
        caller: FrameType | None = sys._getframe()
        while caller is not None:
            frames, caller = frames + 1, caller.f_back
        before = sys.getrecursionlimit()
        sys.setrecursionlimit(min(before, frames + limit - 1))
        try:
            return json.loads(text), True
        except RecursionError:
            pass  # nested deeply, perhaps too deeply: parsed again below
        finally:
            sys.setrecursionlimit(before)
    return json.loads(text), False


def _too_deep(uri: str, policy: ReadPolicy, pointer: str) -> LoadError:
    return LoadError(f"{uri}: nested deeper than {policy.max_depth} levels", pointer)


_CONTAINERS = frozenset({dict, list})


def _depth_exceeds(document: Any, limit: int) -> bool:
    """Whether a container sits `limit` or more levels below the root of a document json.loads made (its containers
    are exactly dicts and lists), walked level by level with one comprehension per level."""
    containers = _CONTAINERS
    level: list[Any] = [document] if type(document) in containers else []
    for _ in range(limit):
        if not level:
            return False
        level = [
            child
            for node in level
            for child in (node.values() if type(node) is dict else node)
            if type(child) in containers
        ]
    return bool(level)


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},:]')


def _json_pointer_at_depth(text: str, depth: int) -> str:
    """The pointer of the first container nested `depth` levels deep in JSON text (a token scan)."""
    frames: list[list[Any]] = []  # [is_object, token, expecting_key]
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            if len(frames) >= depth:
                break
            frames.append([token == "{", 0 if token == "[" else "", token == "{"])
        elif token in "]}":
            if frames:
                frames.pop()
        elif token == ",":
            if frames and frames[-1][0]:
                frames[-1][2] = True
            elif frames:
                frames[-1][1] += 1
        elif token == ":":
            if frames:
                frames[-1][2] = False
        elif frames and frames[-1][0] and frames[-1][2]:
            try:
                frames[-1][1] = json.loads(token)
            except ValueError:
                frames[-1][1] = token[1:-1]
    return "".join("/" + escape(frame[1]) for frame in frames)


@dataclass
class _Frame:
    is_map: bool
    anchor: str | None
    start: int  # expanded node count when it opened
    index: int = 0  # sequence: the next item's index
    key: str = ""  # mapping: the current key
    want_key: bool = True  # mapping: the next node is a key


@dataclass
class _Scan:
    uri: str
    policy: ReadPolicy
    frames: list[_Frame] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)  # finished anchors -> nodes they expand to
    open: set[str] = field(default_factory=set)  # anchors of collections not finished yet
    nodes: int = 0  # nodes so far, aliases expanded
    added: int = 0  # nodes aliases added

    def pointer(self) -> str:
        tokens: list[str] = []
        for frame in self.frames:
            tokens.append(frame.key if frame.is_map else str(frame.index))
        return "".join("/" + escape(t) for t in tokens)

    def node_done(self, scalar: str | None) -> None:
        if not self.frames:
            return
        parent = self.frames[-1]
        if parent.is_map:
            if parent.want_key:
                parent.key = scalar if scalar is not None else "?"
            parent.want_key = not parent.want_key
        else:
            parent.index += 1

    def fail(self, message: str) -> LoadError:
        pointer = self.pointer()
        return LoadError(f"{self.uri}: {message}", pointer)


def _scan_yaml(text: str, uri: str, policy: ReadPolicy) -> None:
    """Refuse YAML nested too deeply, with recursive aliases, or whose aliases expand too far."""
    import yaml

    parser = _loader()(text)
    scan = _Scan(uri, policy)
    try:
        while True:
            event = parser.get_event()
            if event is None or isinstance(event, yaml.StreamEndEvent):
                return
            if isinstance(event, yaml.CollectionStartEvent):
                if len(scan.frames) >= policy.max_depth:
                    raise scan.fail(f"nested deeper than {policy.max_depth} levels")
                scan.nodes += 1
                anchor = event.anchor
                if anchor is not None:
                    scan.open.add(anchor)
                scan.frames.append(_Frame(isinstance(event, yaml.MappingStartEvent), anchor, scan.nodes))
            elif isinstance(event, yaml.CollectionEndEvent):
                frame = scan.frames.pop()
                if frame.anchor is not None:
                    scan.open.discard(frame.anchor)
                    scan.sizes[frame.anchor] = scan.nodes - frame.start + 1
                scan.node_done(None)
            elif isinstance(event, yaml.ScalarEvent):
                scan.nodes += 1
                if event.anchor is not None:
                    scan.sizes[event.anchor] = 1
                scan.node_done(event.value)
            elif isinstance(event, yaml.AliasEvent):
                name = event.anchor or ""
                if name in scan.open:
                    raise scan.fail(f"the alias *{name} refers to a node that contains it (a recursive structure)")
                size = scan.sizes.get(name, 1)
                scan.nodes += size
                scan.added += size
                if scan.added > policy.max_alias_nodes:
                    raise scan.fail(
                        f"YAML aliases expand to more than {policy.max_alias_nodes:,} nodes (an alias bomb); refused"
                    )
                scan.node_done(None)
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()


# `\ud800`-style escapes: JSON and YAML can spell a lone surrogate, which no UTF-8 file can hold
SURROGATE_ESCAPE = re.compile(r"\\(?:u[dD][89a-fA-F]|U0000[dD][89a-fA-F])")
SURROGATE_ESCAPE_BYTES = re.compile(SURROGATE_ESCAPE.pattern.encode("ascii"))
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _scrub(node: Any) -> Any:
    """Lone surrogates (escaped in the text) replaced by U+FFFD, in keys and values, so every later stage and
    every generated file can encode the text (a valid pair was already joined by the parser)."""
    if isinstance(node, str):
        return LONE_SURROGATE.sub("\ufffd", node)
    if isinstance(node, dict):
        return {_scrub(k): _scrub(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_scrub(v) for v in node]
    return node


def _jsonable(node: Any) -> Any:
    """YAML allows keys and scalars JSON has not (int keys like `200:`, binary); make it JSON's data model."""
    if isinstance(node, dict):
        return {_key(k): _jsonable(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_jsonable(v) for v in node]
    if isinstance(node, bytes):
        return node.decode("latin-1")
    if isinstance(node, float) and node != node:  # .nan
        return None
    return node


def _key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return str(key)

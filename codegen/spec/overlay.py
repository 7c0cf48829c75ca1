"""OpenAPI Overlays (Overlay Specification 1.0 and 1.1): changes to a spec the team does not own, kept apart.

An overlay is a YAML/JSON document with an ordered list of actions; each action selects nodes of the spec with an
RFC 9535 JSONPath `target` (evaluated by the `jsonpath-rfc9535` library) and then:
- `remove: true` removes every selected node from its parent;
- `copy: <JSONPath>` (1.1) takes the one node that query selects and merges it into each target, as `update`;
- `update: <value>` merges into each target: into an object, an object's keys are merged recursively (nested
  objects merged, arrays and scalars replaced); into an array, the value is appended (an array's items are); a
  selected scalar is replaced.
Actions apply in order, overlays in the order given, after the spec is loaded and before it is validated.

Problems point into the overlay file (`overlay.yaml#/actions/2/target`). A target that selects nothing is a warning
naming the action; a malformed overlay or action is an error and stops the run (nothing half-curated is generated).
Overlays are read through the same reader as the spec, with a size cap; a `$ref` inside an overlay's values may only
point into the spec (`#/components/...`): the spec's documents are already loaded when the overlay applies.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from .fetch import read
from .load import Documents, iter_refs, to_uri
from .parse import parse
from .policy import LoadError, ReadPolicy
from ..problems import Problem, error, has_errors, join, warning

MAX_OVERLAY_BYTES = 8 * 1024 * 1024  # an overlay is hand-written: 8 MiB is far beyond any real one
MAX_ACTIONS = 5_000
MAX_NODES = 100_000  # nodes one action may change
VERSION = re.compile(r"1\.[01]\.\d+")
ACTION_KEYS = frozenset({"target", "description", "update", "remove", "copy"})
_NOTHING = object()


@dataclass(frozen=True, slots=True)
class Action:
    pointer: str  # /actions/N in the overlay file
    target: str
    description: str
    update: Any = _NOTHING
    remove: bool = False
    copy: str | None = None

    def label(self) -> str:
        return f"action {self.pointer.rsplit('/', 1)[-1]}" + (f" ({self.description!r})" if self.description else "")


@dataclass(frozen=True, slots=True)
class Overlay:
    source: str  # the file (or URL) it was read from, as given
    version: str
    actions: tuple[Action, ...]


def read_overlay(source: str, policy: ReadPolicy | None = None) -> tuple[Overlay | None, list[Problem]]:
    """Read and check one overlay document with the spec's read limits (and at most MAX_OVERLAY_BYTES);
    None (with errors) when it cannot be used."""
    policy = replace(policy or ReadPolicy(), max_bytes=min(MAX_OVERLAY_BYTES, (policy or ReadPolicy()).max_bytes))
    uri = to_uri(source)
    if urlparse(uri).scheme == "file":
        try:
            size = os.stat(Path(source)).st_size
        except OSError as exc:
            return None, [error(f"cannot read overlay: {exc.strerror}", source=source)]
        if size > MAX_OVERLAY_BYTES:
            return None, [
                error(f"overlay is {size:,} bytes, more than the {MAX_OVERLAY_BYTES:,} allowed", source=source)
            ]
    try:
        data = read(uri, policy)
        if len(data) > MAX_OVERLAY_BYTES:
            raise LoadError(f"overlay is {len(data):,} bytes, more than the {MAX_OVERLAY_BYTES:,} allowed")
        document = parse(data, uri, policy)
    except LoadError as exc:
        return None, [error(str(exc), source=source)]
    return check_overlay(document, source)


def check_overlay(document: Any, source: str) -> tuple[Overlay | None, list[Problem]]:
    problems: list[Problem] = []

    def fail(message: str, pointer: str = "") -> None:
        problems.append(error(message, pointer, source))

    if not isinstance(document, dict):
        fail("an overlay must be a mapping with `overlay`, `info` and `actions`")
        return None, problems
    version = document.get("overlay")
    if not isinstance(version, str) or not VERSION.fullmatch(version):
        fail(f"`overlay` must be a 1.0.x or 1.1.x version string, got {version!r}", "/overlay")
    info = document.get("info")
    if not isinstance(info, dict) or not isinstance(info.get("title"), str) or not isinstance(info.get("version"), str):
        fail("`info` must be a mapping with a `title` and a `version` string", "/info")
    actions = document.get("actions")
    if not isinstance(actions, list) or not actions:
        fail("`actions` must be a non-empty list", "/actions")
        return None, problems
    if len(actions) > MAX_ACTIONS:
        fail(f"{len(actions)} actions, more than the {MAX_ACTIONS} allowed", "/actions")
        return None, problems
    found = [_action(node, join("/actions", i), str(version), fail) for i, node in enumerate(actions)]
    if problems:
        return None, problems
    return Overlay(source, str(version), tuple(a for a in found if a is not None)), []


def _action(node: Any, pointer: str, version: str, fail: Any) -> Action | None:
    import jsonpath_rfc9535 as jsonpath  # imported only where an overlay is read (~20 ms of every run otherwise)

    if not isinstance(node, dict):
        fail("an action must be a mapping", pointer)
        return None
    for key in sorted(node):
        if key not in ACTION_KEYS and not str(key).startswith("x-"):
            fail(f"unknown action field {key!r} (allowed: {', '.join(sorted(ACTION_KEYS))}, x-*)", join(pointer, key))
    target, description = node.get("target"), node.get("description", "")
    if not isinstance(target, str) or not target.startswith("$"):
        fail(f"`target` must be a JSONPath query starting with $, got {target!r}", join(pointer, "target"))
        return None
    try:
        jsonpath.compile(target)
    except jsonpath.JSONPathError as exc:
        fail(f"`target` is not an RFC 9535 JSONPath query: {exc}", join(pointer, "target"))
        return None
    if not isinstance(description, str):
        fail("`description` must be a string", join(pointer, "description"))
    remove = node.get("remove", False)
    if not isinstance(remove, bool):
        fail("`remove` must be true or false", join(pointer, "remove"))
    source = node.get("copy")
    if source is not None:
        if not version.startswith("1.1."):
            fail("`copy` needs an overlay of version 1.1.x", join(pointer, "copy"))
        elif not isinstance(source, str) or not source.startswith("$"):
            fail("`copy` must be a JSONPath query starting with $", join(pointer, "copy"))
        else:
            try:
                jsonpath.compile(source)
            except jsonpath.JSONPathError as exc:
                fail(f"`copy` is not an RFC 9535 JSONPath query: {exc}", join(pointer, "copy"))
    update = node.get("update", _NOTHING)
    if update is not _NOTHING:
        for ref in iter_refs(update):
            fail(
                f"$ref {ref!r} in an overlay may only point into the spec (#/...): the spec's documents are "
                "already loaded when the overlay applies",
                join(pointer, "update"),
            )
    if not remove and source is None and update is _NOTHING:
        fail("an action needs `update`, `remove: true` or `copy`", pointer)
    return Action(pointer, target, description if isinstance(description, str) else "", update, remove is True, source)


def apply_overlays(
    documents: Documents, sources: Sequence[str], policy: ReadPolicy | None = None
) -> tuple[Documents | None, list[Problem]]:
    """The spec with every overlay applied, in order (the root document is changed in place)."""
    problems: list[Problem] = []
    root = documents.root
    for source in sources:
        overlay, found = read_overlay(source, policy)
        problems += found
        if overlay is None:
            return None, problems
        root, found = apply_overlay(root, overlay)
        problems += found
        if has_errors(found):
            return None, problems
    if not isinstance(root, dict):
        problems.append(error("after the overlays, the spec is no longer a mapping"))
        return None, problems
    return documents.replace_root(root, lambda _, document: document), problems


def apply_overlay(root: Any, overlay: Overlay) -> tuple[Any, list[Problem]]:
    import jsonpath_rfc9535 as jsonpath

    problems: list[Problem] = []
    for action in overlay.actions:
        nodes = list(jsonpath.find(action.target, root))
        if not nodes:
            problems.append(
                warning(f"{action.label()}: target {action.target} matches nothing", action.pointer, overlay.source)
            )
            continue
        if len(nodes) > MAX_NODES:
            problems.append(
                error(
                    f"{action.label()}: target selects {len(nodes):,} nodes (at most {MAX_NODES:,})",
                    action.pointer,
                    overlay.source,
                )
            )
            return root, problems
        locations = [tuple(node.location) for node in nodes]
        if action.remove:
            if () in locations:
                problems.append(
                    error(f"{action.label()}: cannot remove the whole spec", action.pointer, overlay.source)
                )
                return root, problems
            _remove_all(root, locations)
            continue
        value = action.update
        if action.copy is not None:
            copied = list(jsonpath.find(action.copy, root))
            if len(copied) != 1:
                problems.append(
                    error(
                        f"{action.label()}: copy {action.copy} must select exactly one node, selects {len(copied)}",
                        join(action.pointer, "copy"),
                        overlay.source,
                    )
                )
                return root, problems
            value = copy.deepcopy(copied[0].value)
        for location in locations:
            if isinstance(_walk(root, location), dict) and not isinstance(value, dict):
                what = "`copy` selects" if action.copy is not None else "`update` is"
                problems.append(
                    error(
                        f"{action.label()}: target selects an object but {what} a {type(value).__name__}, "
                        "not a mapping to merge",
                        action.pointer,
                        overlay.source,
                    )
                )
                return root, problems
            root = _update_at(root, location, value)
    return root, problems


def _walk(root: Any, location: tuple[Any, ...]) -> Any:
    node = root
    for key in location:
        node = node[key]
    return node


def _remove_all(root: Any, locations: list[tuple[Any, ...]]) -> None:
    """Children before their parents, higher array indices before lower ones, so every location stays valid."""
    removed: set[tuple[Any, ...]] = set()
    for location in sorted(set(locations), key=_order, reverse=True):
        if any(location[:n] in removed for n in range(len(location))):
            continue
        parent = _walk(root, location[:-1])
        del parent[location[-1]]
        removed.add(location)


def _order(location: tuple[Any, ...]) -> tuple[tuple[int, str, int], ...]:
    return tuple((0, key, 0) if isinstance(key, str) else (1, "", key) for key in location)


def _update_at(root: Any, location: tuple[Any, ...], value: Any) -> Any:
    node = _walk(root, location)
    if isinstance(node, dict) and isinstance(value, dict):
        _merge(node, value)
        return root
    if isinstance(node, list):
        node.extend(copy.deepcopy(value) if isinstance(value, list) else [copy.deepcopy(value)])
        return root
    if not location:
        return copy.deepcopy(value)
    _walk(root, location[:-1])[location[-1]] = copy.deepcopy(value)
    return root


def _merge(into: dict[str, Any], update: dict[str, Any]) -> None:
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = copy.deepcopy(value)

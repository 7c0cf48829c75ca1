"""Security declared or overridden without editing the spec's own `securitySchemes` and `security`.

Sources, highest first:
- the config file: `security-schemes` (scheme key -> scheme object), `security` (the document's default
  requirements) and `[overrides.<operation>] security` (one operation's requirements);
- the spec's extensions: root `x-mcp-security-schemes` (same fields as `components.securitySchemes`), root
  `x-mcp-security` (stands for the root `security`) and an operation's `x-mcp-security` (overrides its own);
- the spec's `components.securitySchemes` and `security`.

`overlay(document, config)` returns a new document (the input is left as it is: only the containers on the way
to a changed key are copied) in which those sources are merged, so normalize reads one ordinary document.
Schemes merge by key (a declared scheme replaces the spec's scheme of that key); requirements replace.
Malformed declarations are warnings naming where they are, and are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ..config import Config
from .model import METHODS, Security
from ..problems import Problem, join, warning

SCHEME_TYPES = ("apiKey", "http", "oauth2", "openIdConnect", "mutualTLS")
API_KEY_LOCATIONS = ("header", "query", "cookie")


def scheme_problems(node: Any, pointer: str) -> list[tuple[str, str]]:
    """What is wrong with one security scheme object, as (message, pointer) pairs; [] when it is usable."""
    if not isinstance(node, dict):
        return [("a security scheme must be an object (table)", pointer)]
    kind = node.get("type")
    if kind not in SCHEME_TYPES:
        return [(f"'type' must be one of {', '.join(SCHEME_TYPES)}, got {kind!r}", join(pointer, "type"))]
    found: list[tuple[str, str]] = []
    if kind == "apiKey":
        if not isinstance(node.get("name"), str) or not node["name"]:
            found.append(("an apiKey scheme needs 'name' (the header, query or cookie name)", join(pointer, "name")))
        if node.get("in") not in API_KEY_LOCATIONS:
            found.append((f"an apiKey scheme needs 'in': one of {', '.join(API_KEY_LOCATIONS)}", join(pointer, "in")))
    elif kind == "http" and (not isinstance(node.get("scheme"), str) or not node["scheme"]):
        found.append(("an http scheme needs 'scheme' (bearer, basic, ...)", join(pointer, "scheme")))
    elif kind == "oauth2":
        flows = node.get("flows")
        if not isinstance(flows, dict) or not flows:
            found.append(
                ("an oauth2 scheme needs 'flows' (e.g. clientCredentials with tokenUrl)", join(pointer, "flows"))
            )
        else:
            client = flows.get("clientCredentials")
            if isinstance(client, dict) and not isinstance(client.get("tokenUrl"), str):
                found.append(("clientCredentials needs 'tokenUrl'", join(pointer, "flows", "clientCredentials")))
    return found


def requirement_problems(node: Any, pointer: str) -> list[tuple[str, str]]:
    """What is wrong with a list of security requirements ([{scheme: [scopes]}, ...]); [] when it is usable."""
    if not isinstance(node, list):
        return [("security must be a list of requirements ({scheme key: [scopes]}; [] for none)", pointer)]
    found: list[tuple[str, str]] = []
    for index, requirement in enumerate(node):
        if not isinstance(requirement, dict):
            found.append(
                ("a security requirement must be an object (table) of scheme key -> scopes", join(pointer, index))
            )
            continue
        for key, scopes in requirement.items():
            if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
                found.append(("scopes must be a list of strings ([] for none)", join(pointer, index, key)))
    return found


def to_security(node: list[dict[str, list[str]]]) -> Security:
    """A checked requirement list as the frozen model shape (kept in the Config)."""
    return tuple(tuple((str(k), tuple(v)) for k, v in sorted(req.items())) for req in node)


def from_security(security: Security) -> list[dict[str, list[str]]]:
    return [{key: list(scopes) for key, scopes in requirement} for requirement in security]


def overlay(document: Any, config: Config) -> tuple[Any, list[Problem]]:
    """`document` with the declared schemes and requirements merged in (see the module docstring)."""
    if not isinstance(document, dict):
        return document, []
    problems: list[Problem] = []

    def checked(found: list[tuple[str, str]]) -> bool:
        problems.extend(warning(f"{message}; ignored", pointer) for message, pointer in found)
        return not found

    doc = dict(document)
    schemes: dict[str, Any] = {}
    components = doc.get("components") if isinstance(doc.get("components"), dict) else {}
    assert isinstance(components, dict)
    if isinstance(components.get("securitySchemes"), dict):
        schemes.update(components["securitySchemes"])
    declared = doc.get("x-mcp-security-schemes")
    added = False
    if declared is not None:
        if not isinstance(declared, dict):
            checked([("x-mcp-security-schemes must be an object of scheme key -> scheme", "/x-mcp-security-schemes")])
        else:
            for key in sorted(declared):
                if checked(scheme_problems(declared[key], join("/x-mcp-security-schemes", key))):
                    schemes[key], added = declared[key], True
    for key, text in config.security_schemes:  # checked when the config was read
        schemes[key], added = json.loads(text), True
    if added:
        doc["components"] = {**components, "securitySchemes": schemes}
    root = doc.get("x-mcp-security")
    if root is not None and checked(requirement_problems(root, "/x-mcp-security")):
        doc["security"] = root
        problems.extend(warning(m, p) for m, p in _undefined(root, schemes, "/x-mcp-security"))
    if config.security is not None:
        doc["security"] = from_security(config.security)
        source = str(config.config_file or "config")
        problems.extend(warning(m, p, source) for m, p in _undefined(doc["security"], schemes, "/security"))
    paths = doc.get("paths")
    if isinstance(paths, dict):
        doc["paths"] = _operations(paths, schemes, config, checked, problems)
    return doc, problems


def _operations(
    paths: dict[str, Any],
    schemes: Mapping[str, Any],
    config: Config,
    checked: Callable[[list[tuple[str, str]]], bool],
    problems: list[Problem],
) -> dict[str, Any]:
    """`paths` with each operation's `x-mcp-security` or config override applied (copied where changed)."""
    overrides = {o.key: o.security for o in config.overrides if o.security is not None}
    out = dict(paths)
    for path, item in paths.items():
        if not isinstance(item, dict):
            continue
        new_item = None
        for method in METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            at = join("/paths", path, method)
            security = None
            if "x-mcp-security" in op and checked(
                requirement_problems(op["x-mcp-security"], join(at, "x-mcp-security"))
            ):
                security = op["x-mcp-security"]
            override = _override(overrides, op.get("operationId"), method, path)
            if override is not None:
                security = from_security(override)
            if security is None:
                continue
            if override is None:
                problems.extend(warning(m, p) for m, p in _undefined(security, schemes, join(at, "x-mcp-security")))
            else:
                source = str(config.config_file or "config")
                problems.extend(warning(m, p, source) for m, p in _undefined(security, schemes, "/overrides"))
            new_item = new_item if new_item is not None else dict(item)
            new_item[method] = {**op, "security": security}
        if new_item is not None:
            out[path] = new_item
    return out


def _override(overrides: Mapping[str, Security], operation_id: Any, method: str, path: str) -> Security | None:
    if isinstance(operation_id, str) and operation_id in overrides:
        return overrides[operation_id]
    for key, security in overrides.items():
        verb, _, where = key.partition(" ")
        if where and verb.lower() == method and where == path:
            return security
    return None


def _undefined(security: Any, schemes: Mapping[str, Any], pointer: str) -> list[tuple[str, str]]:
    """Warnings for requirement keys that name no scheme (only for declared requirements)."""
    if not isinstance(security, list):
        return []
    return [
        (
            f"security scheme {key!r} is not defined (components.securitySchemes, x-mcp-security-schemes or "
            "the config's security-schemes); operations requiring it cannot be called",
            join(pointer, index, key),
        )
        for index, requirement in enumerate(security)
        if isinstance(requirement, dict)
        for key in requirement
        if key not in schemes
    ]

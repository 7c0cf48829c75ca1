"""Swagger 2.0 -> the OpenAPI 3.0 shape, so every later stage sees one dialect.

What moves where:
- host, basePath, schemes -> servers (one per scheme);
- definitions / parameters / responses / securityDefinitions -> components.*, with `$ref`s rewritten;
- `in: body` -> requestBody (one media type per `consumes` entry, JSON when none is given);
- `in: formData` -> requestBody with an object schema (multipart/form-data when a part is `type: file`
  or `consumes` says so, else application/x-www-form-urlencoded);
- parameter type/format/items/... -> `schema`; collectionFormat -> style/explode (csv: form/simple,
  ssv: spaceDelimited, tsv: tabDelimited (no 3.x style; the generated server joins with a tab),
  pipes: pipeDelimited, multi: form + explode);
- responses' `schema` -> `content` (one entry per `produces` media type);
- `type: file` -> binary string; `x-nullable` -> `nullable`; `discriminator: name` -> `{propertyName: name}`.

The result comes with a `PointerMap`: problems found later in the upgraded document are moved back to the
node of the original 2.0 document they come from, so messages point at what the user wrote.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from ..problems import Problem, join
from .load import Documents
from .upgrade_parameters import ParameterUpgrader, media_list
from .upgrade_schemas import refs_into_root, rewrite_refs, upgrade_schema

METHODS = ("get", "put", "post", "delete", "options", "head", "patch")


@dataclass(frozen=True)
class PointerMap:
    """Upgraded-document pointer prefixes -> the original document's pointers."""

    moved: Mapping[str, str]

    def original(self, pointer: str) -> str:
        """The original pointer for `pointer`: its longest moved prefix replaced."""
        probe = pointer
        while True:
            if probe in self.moved:
                return self.moved[probe] + pointer[len(probe) :]
            if not probe:
                return pointer
            probe = probe[: probe.rindex("/")]

    def remap_all(self, problems: list[Problem]) -> list[Problem]:
        return [self.remap(p) for p in problems]

    def remap(self, problem: Problem) -> Problem:
        if problem.source:  # another document: not upgraded
            return problem
        return Problem(problem.level, problem.message, self.original(problem.pointer), problem.source)


def is_swagger2(document: Any) -> bool:
    return isinstance(document, dict) and str(document.get("swagger", "")).startswith("2")


def upgrade(documents: Documents) -> tuple[Documents, PointerMap, list[Problem]]:
    """The bundle with its 2.0 root replaced by the equivalent 3.0 document."""
    upgrader = _Upgrader(documents)
    upgraded = upgrader.run()
    upgraded_documents = documents.replace_root(upgraded, lambda uri, doc: refs_into_root(doc, uri, documents.root_uri))
    return upgraded_documents, PointerMap(dict(upgrader.moved)), upgrader.problems


class _Upgrader(ParameterUpgrader):
    # -- document -----------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        doc = self.doc
        out: dict[str, Any] = {"openapi": "3.0.3"}
        for key, value in doc.items():
            if key.startswith("x-") or key in ("info", "tags", "externalDocs", "security"):
                out[key] = rewrite_refs(copy.deepcopy(value))
        out.setdefault("info", {"title": "API", "version": "0"})
        servers = self.servers()
        if servers:
            out["servers"] = servers
            self.moved["/servers"] = "/host" if "host" in doc else "/basePath"
        components: dict[str, Any] = {}
        if isinstance(doc.get("definitions"), dict):
            components["schemas"] = {k: upgrade_schema(v) for k, v in doc["definitions"].items()}
            self.moved["/components/schemas"] = "/definitions"
        if isinstance(doc.get("parameters"), dict):
            params = {}
            for key, node in doc["parameters"].items():
                if isinstance(node, dict) and node.get("in") in ("body", "formData"):
                    continue  # inlined as a requestBody where operations use them
                at = join("/parameters", key)
                params[key] = self.parameter(node, at, join("/components/parameters", key))
            if params:
                components["parameters"] = params
                self.moved["/components/parameters"] = "/parameters"
        if isinstance(doc.get("responses"), dict):
            components["responses"] = {
                key: self.response(node, join("/components/responses", key), join("/responses", key), self.produces)
                for key, node in doc["responses"].items()
            }
        if isinstance(doc.get("securityDefinitions"), dict):
            components["securitySchemes"] = {
                key: self.security_scheme(node, join("/securityDefinitions", key))
                for key, node in doc["securityDefinitions"].items()
            }
            self.moved["/components/securitySchemes"] = "/securityDefinitions"
        if components:
            out["components"] = components
        if isinstance(doc.get("paths"), dict):
            out["paths"] = {path: self.path_item(path, item) for path, item in doc["paths"].items()}
        else:
            out["paths"] = {}
        return out

    def servers(self) -> list[dict[str, str]]:
        host = self.doc.get("host")
        base_path = self.doc.get("basePath") if isinstance(self.doc.get("basePath"), str) else ""
        assert isinstance(base_path, str)
        if base_path and not base_path.startswith("/"):
            base_path = "/" + base_path
        if not isinstance(host, str) or not host:
            return [{"url": base_path}] if base_path else []
        schemes = (
            [s for s in self.doc.get("schemes", ()) if s in ("http", "https")]
            if isinstance(self.doc.get("schemes"), list)
            else []
        )
        if not schemes:
            root_scheme = urlparse(self.documents.root_uri).scheme
            schemes = [root_scheme if root_scheme in ("http", "https") else "https"]
        return [{"url": f"{scheme}://{host}{base_path}"} for scheme in sorted(schemes, key=lambda s: s != "https")]

    def security_scheme(self, node: Any, at: str) -> Any:
        if not isinstance(node, dict):
            return node
        kind = node.get("type")
        out: dict[str, Any] = {k: v for k, v in node.items() if k.startswith("x-") or k == "description"}
        if kind == "basic":
            out.update(type="http", scheme="basic")
        elif kind == "apiKey":
            out.update(type="apiKey", name=node.get("name"), **{"in": node.get("in")})
        elif kind == "oauth2":
            flow_names = {
                "implicit": "implicit",
                "password": "password",
                "application": "clientCredentials",
                "accessCode": "authorizationCode",
            }
            flow = node.get("flow")
            if flow not in flow_names:
                self.warn(f"unknown oauth2 flow {flow!r}", join(at, "flow"))
                return {"type": "oauth2", "flows": {}}
            details: dict[str, Any] = {"scopes": node.get("scopes") if isinstance(node.get("scopes"), dict) else {}}
            if flow in ("implicit", "accessCode"):
                details["authorizationUrl"] = node.get("authorizationUrl", "")
            if flow in ("password", "application", "accessCode"):
                details["tokenUrl"] = node.get("tokenUrl", "")
            out.update(type="oauth2", flows={flow_names[str(flow)]: details})
        else:
            self.warn(f"unknown security scheme type {kind!r}", join(at, "type"))
            out.update(node)
        return out

    # -- paths --------------------------------------------------------------------------------------
    def path_item(self, path: str, item: Any) -> Any:
        at = join("/paths", path)
        if not isinstance(item, dict):
            return item
        if isinstance(item.get("$ref"), str):
            return rewrite_refs(copy.deepcopy(item))  # 2.0 path item refs point at other files
        shared = item.get("parameters") if isinstance(item.get("parameters"), list) else []
        assert isinstance(shared, list)
        out: dict[str, Any] = {k: copy.deepcopy(v) for k, v in item.items() if k.startswith("x-")}
        kept = self.parameters(shared, join(at, "parameters"), join(at, "parameters"))[0]
        if kept:
            out["parameters"] = kept
        for method in METHODS:
            if isinstance(item.get(method), dict):
                out[method] = self.operation(item[method], join(at, method), shared, join(at, "parameters"))
        return out

    def operation(self, op: dict[str, Any], at: str, shared: list[Any], shared_at: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in op.items():
            if key in ("parameters", "responses", "consumes", "produces", "schemes"):
                continue
            out[key] = rewrite_refs(copy.deepcopy(value))
        consumes = media_list(op["consumes"]) if "consumes" in op else self.consumes
        produces = media_list(op["produces"]) if "produces" in op else self.produces
        own = op.get("parameters") if isinstance(op.get("parameters"), list) else []
        assert isinstance(own, list)
        params, body_params = self.parameters(own, join(at, "parameters"), join(at, "parameters"))
        # a body or form fields declared once for the whole path join the operation's, unless it declares a form field
        # of the same name (it wins, as for any parameter), a body of its own (there is one body) or the other kind (a
        # body and form fields exclude each other)
        declared = {(p.get("name"), p.get("in")) for p, _ in body_params}
        kinds = {p.get("in") for p, _ in body_params}
        for index, node in enumerate(shared):
            resolved, where = self.resolve(node, join(shared_at, index))
            kind = resolved.get("in") if isinstance(resolved, dict) else None
            if kind == "formData" and kinds <= {kind} and (resolved.get("name"), kind) not in declared:
                body_params.append((resolved, where))
            elif kind == "body" and not kinds:
                body_params.append((resolved, where))
        if params:
            out["parameters"] = params
        if body_params:
            body = self.request_body(body_params, join(at, "requestBody"), consumes)
            if body is not None:
                out["requestBody"] = body
        responses = op.get("responses")
        if isinstance(responses, dict):
            out["responses"] = {
                str(status): self.response(
                    node, join(at, "responses", str(status)), join(at, "responses", str(status)), produces
                )
                for status, node in responses.items()
            }
        return out


__all__ = ["PointerMap", "is_swagger2", "upgrade"]

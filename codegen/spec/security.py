"""Servers and security: the API's base URLs, its security schemes and each operation's requirements."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin, urlparse

from .model import Security, SecurityScheme
from .refs import Ref, RefError
from .walker import Walker, text


class ServersAndSecurity(Walker):
    def servers(self, servers: Any, at: Ref) -> tuple[str, ...]:
        if not isinstance(servers, list):
            return ()
        urls = []
        for index, server in enumerate(servers):
            if not isinstance(server, dict) or not isinstance(server.get("url"), str):
                self.warn("server without a 'url' string is ignored", at.child(index))
                continue
            url = server["url"]
            variables = server.get("variables") if isinstance(server.get("variables"), dict) else {}
            assert isinstance(variables, dict)
            for name, variable in variables.items():
                default = variable.get("default") if isinstance(variable, dict) else None
                url = url.replace("{" + name + "}", str(default) if default is not None else "")
            if urlparse(self.root.uri).scheme in ("http", "https"):
                url = urljoin(self.root.uri, url)
            urls.append(url.rstrip("/"))
        return tuple(urls)

    def security_schemes(self) -> Iterator[SecurityScheme]:
        components = self.doc.get("components")
        schemes = components.get("securitySchemes") if isinstance(components, dict) else None
        if not isinstance(schemes, dict):
            return
        at = self.root.child("components", "securitySchemes")
        for key in sorted(schemes):
            try:
                node, _ = self.resolver.resolve(schemes[key], at.child(key))
            except RefError as exc:
                self.warn(f"security scheme {key!r}: {exc}", exc.at)
                continue
            if not isinstance(node, dict) or not isinstance(node.get("type"), str):
                self.warn(f"security scheme {key!r} has no 'type' and is ignored", at.child(key))
                continue
            flows = node.get("flows") if isinstance(node.get("flows"), dict) else {}
            assert isinstance(flows, dict)
            client = flows.get("clientCredentials") if isinstance(flows.get("clientCredentials"), dict) else {}
            assert isinstance(client, dict)
            scopes = client.get("scopes") if isinstance(client.get("scopes"), dict) else {}
            assert isinstance(scopes, dict)
            yield SecurityScheme(
                key=key,
                type=node["type"],
                scheme=text(node.get("scheme")).lower(),
                name=text(node.get("name")),
                location=text(node.get("in")),
                token_url=text(client.get("tokenUrl")),
                scopes=tuple(sorted(str(s) for s in scopes)),
            )

    def security(self, node: Any, at: Ref) -> Security:
        """The requirements (alternatives of schemes -> scopes) at `at`, the operation's or the document's."""
        if not isinstance(node, list):
            return ()
        alternatives = []
        for index, requirement in enumerate(node):
            if isinstance(requirement, dict):
                alternatives.append(
                    tuple(
                        (str(key), tuple(str(s) for s in scopes) if isinstance(scopes, list) else ())
                        for key, scopes in sorted(requirement.items())
                    )
                )
                self.check_requirement([str(key) for key in sorted(requirement)], at.child(index))
        return tuple(alternatives)

    def check_requirement(self, keys: list[str], at: Ref) -> None:
        """Warn (once per requirement) when its schemes need the Authorization header in different ways
        (bearer tokens can share it: one is sent)."""
        if len(keys) < 2 or at.pointer in self._warned_security:
            return
        components = self.doc.get("components")
        schemes = components.get("securitySchemes") if isinstance(components, dict) else None
        clashing = []
        if not isinstance(schemes, dict):
            return
        for key in keys:
            try:
                scheme, _ = self.resolver.resolve(
                    schemes.get(key), self.root.child("components", "securitySchemes", key)
                )
            except RefError:
                continue
            family = authorization_family(key, scheme) if isinstance(scheme, dict) else None
            if family is not None:
                clashing.append((key, family))
        if len({family for _, family in clashing}) > 1:
            self._warned_security.add(at.pointer)
            self.warn(
                f"security requirement combines {', '.join(repr(k) for k, _ in clashing)}, which all need the "
                "Authorization header: one request cannot carry them, so the generated server cannot use this "
                "requirement (a call that has no other alternative returns an error)",
                at,
            )


def authorization_family(key: str, scheme: dict[str, Any]) -> str | None:
    """What a security scheme puts in the Authorization header: "bearer" for a bearer token (http bearer,
    OAuth2, OpenID Connect: one header can serve several), its key for another use, None for none."""
    kind = scheme.get("type")
    if kind in ("oauth2", "openIdConnect") or (kind == "http" and text(scheme.get("scheme")).lower() in ("", "bearer")):
        return "bearer"
    name = scheme.get("name")
    if kind == "http" or (
        kind == "apiKey" and scheme.get("in") == "header" and isinstance(name, str) and name.lower() == "authorization"
    ):
        return key
    return None

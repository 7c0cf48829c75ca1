"""A small OAuth 2.1 authorization server on 127.0.0.1 for tests, built on joserfc (JWS/JWK/JWT).

    with auth_server() as issuer:                  # issuer.url == "http://127.0.0.1:<port>"
        token = issuer.issue("alice", audience="http://127.0.0.1:8000/mcp", scope="pets:read")
        issuer.rotate()                            # a new signing key; the old one stays published unless dropped
        issuer.opaque("bob", audience=...)         # an opaque token, known only to introspection

Endpoints: RFC 8414 metadata (/.well-known/oauth-authorization-server) and OpenID discovery
(/.well-known/openid-configuration), the key set (/jwks), the token endpoint (/token: client_credentials and
RFC 8693 token exchange, client_secret_basic or client_secret_post) and RFC 7662 introspection (/introspect).
Registered clients are `clients` (id -> secret), the scopes each may get `allowed` (id -> set; absent: any). Every request is recorded in `requests` (path, form fields;
secrets are not kept), the key set fetches counted in `jwks_fetches`, the exchanges in `exchanges`.
Exchanged tokens carry the subject's `sub`, the requested `audience` and `act: {"sub": <client id>}`.
"""

from __future__ import annotations

import base64
import contextlib
import json
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, KeySet, RSAKey

from .servers import http_server

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
MAX_FORM = 64_000


@dataclass
class Issuer:
    url: str = ""
    clients: dict[str, str] = field(default_factory=dict)  # client id -> secret
    allowed: dict[str, set[str]] = field(default_factory=dict)  # client id -> the scopes it may get (absent: any)
    keys: list[RSAKey | ECKey] = field(default_factory=list)  # published; the last one signs
    opaque_tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    exchanges: list[dict[str, str]] = field(default_factory=list)  # (subject's sub, audience, issued token)
    jwks_fetches: int = 0
    lifetime: int = 300
    lock: threading.Lock = field(default_factory=threading.Lock)

    # -- keys ------------------------------------------------------------------------------------
    def rotate(self, drop_old: bool = False, kind: str = "EC") -> str:
        """A new signing key (kid returned); with `drop_old` the previous ones are no longer published."""
        kid = f"key-{len(self.keys) + 1}-{secrets.token_hex(3)}"
        if kind == "RSA":
            key: RSAKey | ECKey = RSAKey.generate_key(2048, parameters={"kid": kid, "use": "sig", "alg": "RS256"})
        else:
            key = ECKey.generate_key("P-256", parameters={"kid": kid, "use": "sig", "alg": "ES256"})
        with self.lock:
            self.keys = [key] if drop_old else [*self.keys, key]
        return kid

    def jwks(self) -> dict[str, Any]:
        with self.lock:
            self.jwks_fetches += 1
            return KeySet(list(self.keys)).as_dict(private=False)

    # -- tokens ----------------------------------------------------------------------------------
    def issue(
        self,
        subject: str,
        audience: str | None,
        scope: str = "",
        *,
        lifetime: int | None = None,
        not_before: int | None = None,
        issuer: str | None = None,
        client_id: str = "test-client",
        key: RSAKey | ECKey | None = None,
        extra: dict[str, Any] | None = None,
    ) -> str:
        """A signed JWT access token (RFC 9068 shape) for `subject`; the options make the bad ones."""
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": issuer if issuer is not None else self.url,
            "sub": subject,
            "client_id": client_id,
            "iat": now,
            "exp": now + (lifetime if lifetime is not None else self.lifetime),
            "jti": secrets.token_hex(8),
        }
        if audience is not None:
            claims["aud"] = audience
        if scope:
            claims["scope"] = scope
        if not_before is not None:
            claims["nbf"] = now + not_before
        claims.update(extra or {})
        signer = key or self.keys[-1]
        algorithm = "RS256" if isinstance(signer, RSAKey) else "ES256"
        return jwt.encode({"alg": algorithm, "kid": signer.kid, "typ": "at+jwt"}, claims, signer)

    def opaque(self, subject: str, audience: str, scope: str = "", active: bool = True) -> str:
        token = secrets.token_urlsafe(24)
        now = int(time.time())
        self.opaque_tokens[token] = {
            "active": active,
            "sub": subject,
            "aud": audience,
            "scope": scope,
            "iss": self.url,
            "client_id": "test-client",
            "exp": now + self.lifetime,
            "iat": now,
        }
        return token

    def verify(self, token: str) -> dict[str, Any] | None:
        """The claims of a token this server issued and still publishes the key of, else None."""
        try:
            return dict(jwt.decode(token, KeySet(list(self.keys)), algorithms=["RS256", "ES256"]).claims)
        except (JoseError, ValueError):
            return None

    # -- endpoints -------------------------------------------------------------------------------
    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "token_endpoint": f"{self.url}/token",
            "jwks_uri": f"{self.url}/jwks",
            "introspection_endpoint": f"{self.url}/introspect",
            "authorization_endpoint": f"{self.url}/authorize",  # not served: client credentials and exchange only
            "response_types_supported": ["code"],
            "grant_types_supported": ["client_credentials", TOKEN_EXCHANGE],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "code_challenge_methods_supported": ["S256"],
        }

    def client(self, form: dict[str, str], authorization: str) -> str | None:
        """The authenticated client id (basic or post), else None."""
        client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        if authorization.lower().startswith("basic "):
            try:
                client_id, _, secret = base64.b64decode(authorization[6:]).decode().partition(":")
            except ValueError:
                return None
        expected = self.clients.get(client_id)
        return client_id if expected is not None and secrets.compare_digest(expected, secret) else None

    def token(self, form: dict[str, str], authorization: str) -> tuple[int, dict[str, Any]]:
        client_id = self.client(form, authorization)
        if client_id is None:
            return 401, {"error": "invalid_client"}
        grant = form.get("grant_type")
        if grant == "client_credentials":
            scope = form.get("scope", "")
            if client_id in self.allowed:  # grants the allowed part of the request (RFC 6749 section 3.3)
                scope = " ".join(s for s in scope.split() if s in self.allowed[client_id])
            audience = form.get("resource") or form.get("audience")
            token = self.issue(client_id, audience, scope, client_id=client_id)
            return 200, {"access_token": token, "token_type": "Bearer", "expires_in": self.lifetime, "scope": scope}
        if grant == TOKEN_EXCHANGE:
            if form.get("subject_token_type") != ACCESS_TOKEN_TYPE:
                return 400, {"error": "invalid_request", "error_description": "subject_token_type"}
            claims = self.verify(form.get("subject_token", ""))
            if claims is None or claims.get("exp", 0) < time.time():
                return 400, {"error": "invalid_grant", "error_description": "subject_token"}
            audience = form.get("audience") or form.get("resource")
            token = self.issue(str(claims["sub"]), audience, client_id=client_id, extra={"act": {"sub": client_id}})
            with self.lock:
                self.exchanges.append({"sub": str(claims["sub"]), "audience": audience or "", "token": token})
            return 200, {
                "access_token": token,
                "issued_token_type": ACCESS_TOKEN_TYPE,
                "token_type": "Bearer",
                "expires_in": self.lifetime,
            }
        return 400, {"error": "unsupported_grant_type"}

    def introspect(self, form: dict[str, str], authorization: str) -> tuple[int, dict[str, Any]]:
        if self.client(form, authorization) is None:
            return 401, {"error": "invalid_client"}
        found = self.opaque_tokens.get(form.get("token", ""))
        if found is None:
            claims = self.verify(form.get("token", ""))
            return 200, ({"active": True, **claims} if claims else {"active": False})
        return 200, found if found["active"] else {"active": False}


def _handler(issuer: Issuer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def answer(self, status: int, data: Any) -> None:
            body = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            with issuer.lock:
                issuer.requests.append((path, {}))
            if path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
                self.answer(200, issuer.metadata())
            elif path == "/jwks":
                self.answer(200, issuer.jwks())
            else:
                self.answer(404, {"error": "not_found"})

        def do_POST(self) -> None:
            path = self.path.split("?", 1)[0]
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_FORM:
                self.answer(413, {"error": "invalid_request"})
                return
            raw = parse_qs(self.rfile.read(length).decode(), keep_blank_values=True)
            form = {key: values[0] for key, values in raw.items()}
            with issuer.lock:
                issuer.requests.append(
                    (path, {k: v for k, v in form.items() if "secret" not in k and "token" not in k})
                )
            authorization = self.headers.get("Authorization") or ""
            if path == "/token":
                self.answer(*issuer.token(form, authorization))
            elif path == "/introspect":
                self.answer(*issuer.introspect(form, authorization))
            else:
                self.answer(404, {"error": "not_found"})

    return Handler


@contextlib.contextmanager
def auth_server(clients: dict[str, str] | None = None) -> Iterator[Issuer]:
    issuer = Issuer(clients=dict(clients or {"test-client": "test-secret", "mcp-server": "server-secret"}))
    issuer.rotate(kind="RSA")
    with http_server(_handler(issuer), poll_interval=0.1) as url:
        issuer.url = url
        yield issuer

"""The intermediate representation: what an API offers, independent of how the spec spelled it.

This is the contract between understanding the spec (spec/: load, upgrade, validate, normalize) and what is
made of it (surface/: the tools; emit/: the package). Nothing after normalize reads the spec document itself:
`Api` and its `Operation`s say everything. Schemas stay OpenAPI schema nodes here, each with its location, so
the schema conversion (surface/schemas.py) can resolve references and report problems at the right pointer.
All of it is frozen: a stage that needs a different value makes a new one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .refs import Ref

Location = Literal["path", "query", "header", "cookie"]
Dialect = Literal["3.0", "3.1"]
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


@dataclass(frozen=True, slots=True)
class Schema:
    node: Any  # an OpenAPI schema object (or a boolean, in 3.1), possibly a $ref
    at: Ref


@dataclass(frozen=True, slots=True)
class Parameter:
    name: str
    location: Location
    required: bool
    schema: Schema | None
    description: str
    style: str
    explode: bool
    allow_reserved: bool
    deprecated: bool
    content_type: str | None  # the media type when the parameter is declared with `content`
    at: Ref
    examples: tuple[Any, ...] = ()  # the parameter's own `example` / `examples` values


@dataclass(frozen=True, slots=True)
class Body:
    media_type: str
    schema: Schema | None
    required: bool
    description: str
    alternatives: tuple[str, ...]  # the other media types the operation accepts
    encoding: tuple[tuple[str, str], ...]  # multipart/form: property -> content type
    at: Ref
    examples: tuple[Any, ...] = ()  # the media type's `example` / `examples` values
    encoding_styles: tuple[tuple[str, str, bool], ...] = ()  # form/multipart: property -> (style, explode)


@dataclass(frozen=True, slots=True)
class Response:
    status: str  # "200", "2XX", "default", ...
    description: str
    media_type: str | None  # the preferred one (JSON first) of the media types in `content`
    schema: Schema | None
    media_types: tuple[str, ...]  # every media type the response declares
    at: Ref
    headers: tuple[str, ...] = ()  # the response headers it declares, lower case, sorted


@dataclass(frozen=True, slots=True)
class SecurityScheme:
    key: str
    type: str  # apiKey | http | oauth2 | openIdConnect | mutualTLS
    scheme: str  # for http: bearer, basic, ...
    name: str  # for apiKey: the header/query/cookie name
    location: str  # for apiKey: header | query | cookie
    token_url: str  # for oauth2 client credentials
    scopes: tuple[str, ...]


# Alternatives (OR) of requirements (AND), each requirement a (scheme key, scopes) pair.
Security = tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]


@dataclass(frozen=True, slots=True)
class Operation:
    method: str  # upper case
    path: str
    operation_id: str | None
    summary: str
    description: str
    tags: tuple[str, ...]
    deprecated: bool
    parameters: tuple[Parameter, ...]
    body: Body | None
    responses: tuple[Response, ...]
    security: Security
    extensions: tuple[tuple[str, Any], ...]  # the operation's x-mcp-* extensions
    at: Ref
    # values every request carries, not tool arguments: (header | query | cookie, wire name, value) -- parameters
    # a path key's `#name=value` fragment or `?name=value` query fixes, and single-valued Accept/Content-Type headers
    fixed: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Api:
    title: str
    version: str
    description: str
    dialect: Dialect
    servers: tuple[str, ...]  # server URLs, variables substituted
    operations: tuple[Operation, ...]
    security_schemes: tuple[SecurityScheme, ...]

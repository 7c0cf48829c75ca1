"""The tool definition: what the rest of the generator (and the generated server) gets from the surface.

`ToolSpec` is the contract between understanding the spec and emitting code: templates receive ToolSpecs
(and the IR's API-level facts), never the spec. `RequestPlan` is everything the generated server needs to
turn a tool's arguments back into the exact HTTP request the spec describes (routes.json): for each argument,
its wire name, location and serialization; the body's media type; the Accept type; the security alternatives
and fixed values sent with every request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..spec.model import Operation
from .annotations import listed
from .pagination import PagePlan


@dataclass(frozen=True, slots=True)
class ArgPlan:
    arg: str  # the argument key in inputSchema
    name: str  # the name on the wire
    location: str  # path | query | header | cookie | body (a property of a flattened body)
    style: str = ""
    explode: bool = False
    allow_reserved: bool = False
    content_type: str | None = None  # parameters declared with `content` are serialized as this
    file: bool = False  # a multipart file part: the argument is {"content": base64, "filename"?, "contentType"?}
    nullable: bool = False  # a JSON body property whose schema allows null: an explicit null is sent as null

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"arg": self.arg, "name": self.name, "in": self.location}
        if self.location != "body" or self.style:
            data.update(style=self.style, explode=self.explode)
        if self.file:
            data["file"] = True
        if self.nullable:
            data["nullable"] = True
        if self.allow_reserved:
            data["allowReserved"] = True
        if self.content_type:
            data["contentType"] = self.content_type
        return data


@dataclass(frozen=True, slots=True)
class BodyPlan:
    media_type: str
    arg: str | None  # the argument holding the whole body; None when its properties are arguments
    required: bool

    def to_json(self) -> dict[str, Any]:
        return {"mediaType": self.media_type, "arg": self.arg, "required": self.required}


@dataclass(frozen=True, slots=True)
class ResultPlan:
    """How the server shapes a JSON result (surface/results.py): next pages, projection, the budget."""

    items: str | None = None  # dotted path of the item array ("": the root array); None: not a list
    pages: PagePlan | None = None
    fields: str | None = None  # the argument key of the projection (`fields`), when the tool takes one
    max_items: str | None = None  # argument keys of auto-pagination, on paginated list tools
    max_pages: str | None = None
    next_in: str = "structured"  # where `next` goes: structured (the outputSchema declares it) | meta
    tokens: int | None = None  # this operation's result budget (x-mcp-result-tokens / config); None: the server's

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.items is not None:
            data["items"] = self.items
        if self.pages is not None:
            data["pages"] = self.pages.to_json()
            data["nextIn"] = self.next_in
        for key, value in (("fields", self.fields), ("maxItems", self.max_items), ("maxPages", self.max_pages)):
            if value is not None:
                data[key] = value
        if self.tokens is not None:
            data["tokens"] = self.tokens
        return data


@dataclass(frozen=True, slots=True)
class RequestPlan:
    method: str
    path: str
    args: tuple[ArgPlan, ...]
    body: BodyPlan | None
    accept: str | None
    wrap_result: bool  # the structured result is {"result": <response>} (non-object response schema)
    # alternatives (OR) of requirements (AND): scheme key -> scopes; () = no authentication
    security: tuple[tuple[tuple[str, tuple[str, ...]], ...], ...] = ()
    fixed: tuple[tuple[str, str, str], ...] = ()  # (header | query | cookie, name, value) sent with every request
    # what the server undoes before building the request, per argument, when a client profile reshaped the
    # input schema: {"absent": True} a null means "not given", {"json": True} JSON text is decoded, nested
    # under "properties" / "items" (surface/profiles/shape.py)
    restore: Mapping[str, Any] | None = None
    results: ResultPlan | None = None  # JSON results: next pages, projection, budget

    def to_json(self, args: bool = True) -> dict[str, Any]:
        """routes.json's entry; `args=False`: "args" is left None (for a writer that writes the arguments itself)."""
        data: dict[str, Any] = {
            "method": self.method,
            "path": self.path,
            "args": [a.to_json() for a in self.args] if args else None,
            "body": self.body.to_json() if self.body else None,
            "accept": self.accept,
            "wrapResult": self.wrap_result,
        }
        if self.security:
            data["security"] = [{key: list(scopes) for key, scopes in alt} for alt in self.security]
        if self.fixed:
            data["fixed"] = [{"in": location, "name": name, "value": value} for location, name, value in self.fixed]
        if self.restore:
            data["restore"] = self.restore
        if self.results is not None:
            data["results"] = self.results.to_json()
        return data


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None
    annotations: Mapping[str, Any]
    plan: RequestPlan
    operation: Operation
    # the output schema a listing too large to carry it left out (listing.fit_listing): describe_tool still shows it
    described_output: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The tool exactly as tools/list sends it (see tool_entry)."""
        return tool_entry(
            self.name, self.title, self.description, self.input_schema, self.output_schema, self.annotations
        )


def tool_entry(
    name: str,
    title: str,
    description: str,
    input_schema: Mapping[str, Any],
    output_schema: Mapping[str, Any] | None,
    annotations: Mapping[str, Any],
) -> dict[str, Any]:
    """A tools/list entry: the title once (in `annotations`, which clients read when the tool has no `title` of
    its own), hints equal to their MCP default left out."""
    data: dict[str, Any] = {"name": name}
    if annotations.get("title") != title:
        data["title"] = title
    data.update(description=description, inputSchema=input_schema)
    if output_schema is not None:
        data["outputSchema"] = output_schema
    data["annotations"] = listed(annotations)
    return data

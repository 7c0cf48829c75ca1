"""Tests of the generated petstore server, in-process.

The official MCP client talks to `build_server()` directly; httpx.MockTransport stands in for the API,
so every tool's request can be checked without a network: credentials, argument checks, retries,
timeouts, cancellation, rate and connection limits, progress, every kind of response, redirects,
secrets kept out of results and logs.

The tests are generic over the API: each check picks its tool from tools.json and routes.json in a
fixed order (the first tool, in tools.json order, that suits the check). When no tool of this API suits
a check, the test asserts that property of the tool list instead and checks the behaviour that applies.
Waits are tens of milliseconds: the intervals are settings.
"""

from __future__ import annotations

import base64
import copy
import gzip
import json
import logging
import math
import re
import threading
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import replace
from functools import partial
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import anyio
import httpx
import httpx2
import jwt
import mcp.types as types
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from petstore.auth import (
    SCHEMES,
    Auth,
    AuthError,
    authorization_family,
    usable,
    uses_authorization,
)
from petstore.cli import check_oauth, environment_help, parse_args, settings_from
from petstore.requests import ArgumentError, Request, Route, build_request
from petstore.server import build_server
from petstore.settings import (
    CREDENTIAL_VARIABLES,
    ENV_PREFIX,
    OPTIONAL_VARIABLES,
    Settings,
)
from petstore.web import guard, http_app

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),
]

PACKAGE = files("petstore")
TOOLS: list[dict[str, Any]] = json.loads(
    PACKAGE.joinpath("tools.json").read_text(encoding="utf-8")
)
ROUTES: dict[str, dict[str, Any]] = json.loads(
    PACKAGE.joinpath("routes.json").read_text(encoding="utf-8")
)
BASE_URL = "http://api.test"
# one made-up value per credential variable, recognisable in requests and never allowed in results
SECRETS = {
    name: f"s3cret{i}-{name.lower()}" for i, name in enumerate(CREDENTIAL_VARIABLES)
}
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})

Answer = Callable[[httpx.Request], httpx.Response | Awaitable[httpx.Response]]


class Recorder:
    """A fake API: records each request (and when it came) and answers with a fixed response or `answer`."""

    def __init__(
        self,
        status: int = 204,
        body: bytes = b"",
        content_type: str = "application/json",
        answer: Answer | None = None,
    ) -> None:
        self.requests: list[httpx.Request] = []
        self.times: list[float] = []
        self.status, self.body, self.content_type = status, body, content_type
        self.answer = answer

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        self.times.append(time.monotonic())
        if self.answer is not None:
            reply = self.answer(request)
            return reply if isinstance(reply, httpx.Response) else await reply
        return httpx.Response(
            self.status, content=self.body, headers={"content-type": self.content_type}
        )


def server(recorder: Recorder, base_url: str = BASE_URL, **options: Any) -> Any:
    """The server with every credential set, no retries (unless asked) and `recorder` as the API."""
    settings = replace(
        Settings(base_url=base_url, retries=0, backoff=0.01, credentials=SECRETS),
        **options,
    )
    return build_server(settings, httpx.MockTransport(recorder))


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


def script(*answers: httpx.Response) -> Answer:
    """Answer with `answers` in turn, then with the last one again."""
    replies = list(answers)

    def answer(request: httpx.Request) -> httpx.Response:
        return replies.pop(0) if len(replies) > 1 else replies[0]

    return answer


# -- sample arguments ---------------------------------------------------------------------------------
# Each tool is called with arguments built from its inputSchema: its required arguments, each the first
# value (in a fixed order of candidates) that jsonschema accepts for its schema, formats included. The
# whole set is checked against the inputSchema before any call, so a refusal by the server is a real
# failure; a tool for which no valid set can be built is left out of the checks (test_sample_arguments
# skips, naming it and the reason).
FORMATS = {
    "date-time": "2024-01-02T03:04:05Z",
    "date": "2024-01-02",
    "time": "03:04:05Z",
    "duration": "P1D",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ip": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "uri": "https://example.com/x",
    "url": "https://example.com/x",
    "iri": "https://example.com/x",
    "uri-reference": "https://example.com/x",
    "iri-reference": "https://example.com/x",
    "uri-template": "https://example.com/{x}",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "json-pointer": "/x",
    "relative-json-pointer": "0",
    "regex": "^x$",
    "byte": "eA==",
    "base64": "eA==",
    "int32": "1",
    "int64": "1",
}
MAX_DEPTH = 12  # nesting of built values (a recursive schema ends here)
LOWER = ("minimum", "minLength", "minItems", "minProperties")
UPPER = ("maximum", "maxLength", "maxItems", "maxProperties")


class NoSample(Exception):
    """No valid value could be built for a schema; the message says where and why."""


def merge(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """One schema meant to meet both (what cannot be combined is kept from `first`; the check catches it)."""
    out = dict(first)
    for key, value in second.items():
        mine = out.get(key)
        if key not in out:
            out[key] = value
        elif key == "properties" and isinstance(mine, dict) and isinstance(value, dict):
            out[key] = mine | {
                k: {"allOf": [mine[k], v]} if k in mine else v for k, v in value.items()
            }
        elif (
            key in ("required", "allOf")
            and isinstance(mine, list)
            and isinstance(value, list)
        ):
            out[key] = (
                list(dict.fromkeys([*mine, *value]))
                if key == "required"
                else [*mine, *value]
            )
        elif key == "enum" and isinstance(mine, list) and isinstance(value, list):
            out[key] = [v for v in mine if v in value]
        elif key == "type":
            out[key] = common_types(mine, value)
        elif (
            key in LOWER + UPPER
            and isinstance(mine, (int, float))
            and isinstance(value, (int, float))
        ):
            out[key] = max(mine, value) if key in LOWER else min(mine, value)
    return out


def common_types(first: Any, second: Any) -> Any:
    """The JSON types both `type` values allow (an integer is a number)."""
    ones, others = [first] if isinstance(first, str) else first, (
        [second] if isinstance(second, str) else second
    )
    if not isinstance(ones, list) or not isinstance(others, list):
        return first
    both = [t for t in ones if t in others or t == "integer" and "number" in others]
    both += [t for t in others if t == "integer" and "number" in ones and t not in both]
    return both[0] if len(both) == 1 else both


class Sampler:
    """Builds values for the schemas of one tool (whose $defs are `defs`) and checks them with jsonschema."""

    def __init__(self, defs: dict[str, Any]) -> None:
        from jsonschema import validators

        self.defs = defs
        self.validator: Any = validators.Draft202012Validator

    def problem(self, schema: Any, value: Any) -> str | None:
        """Why `value` does not meet `schema` (first error); None when it does."""
        from jsonschema.exceptions import best_match

        root = {**schema, "$defs": self.defs} if isinstance(schema, dict) else schema
        try:
            error = best_match(
                self.validator(
                    root, format_checker=self.validator.FORMAT_CHECKER
                ).iter_errors(value)
            )
        except Exception as exc:  # e.g. a pattern Python cannot compile
            return (
                f"the schema cannot be checked ({type(exc).__name__}: {str(exc)[:100]})"
            )
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path)
        return f"{where + ': ' if where else ''}{error.message[:200]}"

    def resolve(self, schema: Any) -> Any:
        """`schema` with its $ref (to this tool's $defs) replaced by the target; sibling keywords apply too."""
        for _ in range(16):
            if not isinstance(schema, dict) or not isinstance(schema.get("$ref"), str):
                return schema
            ref: str = schema["$ref"]
            if not ref.startswith("#/"):
                raise NoSample(f"$ref {ref} is not local")
            found: Any = {"$defs": self.defs}
            for token in ref[2:].split("/"):
                token = unquote(token).replace("~1", "/").replace("~0", "~")
                if not isinstance(found, dict) or token not in found:
                    raise NoSample(f"$ref {ref} does not resolve")
                found = found[token]
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema = (
                merge(found, rest)
                if isinstance(found, dict)
                else found if not rest else {"allOf": [found, rest]}
            )
        raise NoSample("$ref chain too long")

    def value(
        self, schema: Any, where: str = "", depth: int = 0, fewest: bool = False
    ) -> Any:
        """The first candidate value that meets `schema`; NoSample when none does."""
        if depth > MAX_DEPTH:
            raise NoSample(f"{where or '(arguments)'}: nested too deep")
        schema = self.resolve(schema)
        if schema is False:
            raise NoSample(f"{where or '(arguments)'}: the schema accepts nothing")
        if not isinstance(schema, dict) or not schema:
            return "x"
        reason = f"{where or '(arguments)'}: no value meets the schema"
        for build in self.candidates(schema, where, depth, fewest):
            try:
                candidate = build()
            except NoSample as exc:
                reason = str(exc)
                continue
            except (
                Exception
            ) as exc:  # a keyword of an unusual shape (e.g. a patternProperties key Python cannot read)
                reason = (
                    f"{where or '(arguments)'}: {type(exc).__name__}: {str(exc)[:100]}"
                )
                continue
            problem = self.problem(schema, candidate)
            if problem is None:
                return candidate
            reason = f"{where or '(arguments)'}: {problem} (value {json.dumps(candidate, default=str)[:80]})"
        raise NoSample(reason)

    def candidates(
        self, schema: dict[str, Any], where: str, depth: int, fewest: bool
    ) -> Iterator[Callable[[], Any]]:
        if "const" in schema:
            yield lambda: schema["const"]
        if isinstance(schema.get("enum"), list):
            yield from map(constant, sorted(schema["enum"], key=lambda v: v is None))
        for key in ("oneOf", "anyOf"):
            options = schema.get(key)
            if isinstance(options, list) and options:
                rest = {k: v for k, v in schema.items() if k != key}
                for option in options:
                    yield partial(self.branch, rest, option, where, depth + 1, fewest)
                break
        else:
            if isinstance(schema.get("allOf"), list):
                merged: dict[str, Any] = {
                    k: v for k, v in schema.items() if k != "allOf"
                }
                for part in schema["allOf"]:
                    part = self.resolve(part)
                    merged = merge(merged, part) if isinstance(part, dict) else merged
                yield lambda: self.value(merged, where, depth + 1, fewest)
            else:
                yield from self.typed(schema, where, depth, fewest)
        examples = schema.get("examples")
        yield from map(
            constant, [schema[key] for key in ("default", "example") if key in schema]
        )
        yield from map(constant, examples if isinstance(examples, list) else [])

    def branch(
        self, rest: dict[str, Any], option: Any, where: str, depth: int, fewest: bool
    ) -> Any:
        """A value for one oneOf/anyOf option together with the keywords beside it."""
        option = self.resolve(option)
        return self.value(
            merge(rest, option) if isinstance(option, dict) else option,
            where,
            depth,
            fewest,
        )

    def typed(
        self, schema: dict[str, Any], where: str, depth: int, fewest: bool
    ) -> Iterator[Callable[[], Any]]:
        kinds = schema.get("type")
        kinds = (
            [kinds]
            if isinstance(kinds, str)
            else kinds if isinstance(kinds, list) else [kind_of(schema)]
        )
        for kind in sorted(kinds, key=lambda k: k == "null"):
            if kind == "null":
                yield lambda: None
            elif kind == "boolean":
                yield lambda: True
            elif kind in ("integer", "number"):
                yield partial(number, schema, kind == "integer")
            elif kind == "string":
                yield from self.strings(schema)
            elif kind == "array":
                yield lambda: self.array(schema, where, depth)
                yield lambda: []
            elif kind == "object":
                yield from self.objects(schema, where, depth, fewest)

    def strings(self, schema: dict[str, Any]) -> Iterator[Callable[[], Any]]:
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        fmt = schema.get("format")
        if schema.get("contentEncoding") == "base64":
            yield lambda: "eA=="  # b"x"
        if "JSON text: " in str(
            schema.get("description", "")
        ):  # a value a client profile sends as JSON text
            yield lambda: "{}"
        if isinstance(schema.get("pattern"), str):
            key = json.dumps(schema, sort_keys=True, default=str)
            yield lambda: from_regex(
                schema["pattern"], lambda text: self.problem(schema, text) is None, key
            )
        if isinstance(fmt, str) and fmt in FORMATS:
            yield lambda: FORMATS[fmt]
        text = "x" * max(1, low if isinstance(low, int) else 1)
        yield lambda: text[:high] if isinstance(high, int) else text

    def array(self, schema: dict[str, Any], where: str, depth: int) -> list[Any]:
        low, high = schema.get("minItems", 0), schema.get("maxItems")
        count = max(1, low if isinstance(low, int) else 0)
        count = min(count, high) if isinstance(high, int) else count
        prefix: Any = schema.get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else []
        items = [
            self.value(p, f"{where}/{i}", depth + 1)
            for i, p in enumerate(prefix[:count])
        ]
        if len(items) < count:
            one = self.value(
                schema.get("items", {}), f"{where}/{len(items)}", depth + 1
            )
            items += [one] * (count - len(items))
        return items

    def objects(
        self, schema: dict[str, Any], where: str, depth: int, fewest: bool
    ) -> Iterator[Callable[[], Any]]:
        props: Any = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        patterns: Any = schema.get("patternProperties")
        patterns = patterns if isinstance(patterns, dict) else {}
        extra = schema.get("additionalProperties", True)
        required = [
            name for name in schema.get("required", []) if isinstance(name, str)
        ]
        least = (
            schema.get("minProperties", 0)
            if isinstance(schema.get("minProperties"), int)
            else 0
        )

        def schema_of(name: str) -> Any:
            if name in props:
                return props[name]
            return next(
                (sub for pattern, sub in patterns.items() if re.search(pattern, name)),
                extra,
            )

        def build(names: list[str]) -> dict[str, Any]:
            return {
                name: self.value(
                    schema_of(name), f"{where}/{name}".lstrip("/"), depth + 1
                )
                for name in names
            }

        def new_key() -> str:
            if patterns:
                return from_regex(next(iter(patterns)), lambda key: True, "key")
            names = schema.get("propertyNames")
            return (
                str(self.value(names, where, depth + 1))
                if isinstance(names, dict)
                else "key"
            )

        optional = [name for name in props if name not in required]
        if required or least:
            names = required + optional[: max(0, least - len(required))]
            yield lambda: build(names)
            if len(names) < least:
                yield lambda: build(names) | {
                    new_key(): self.value(schema_of(new_key()), where, depth + 1)
                }
        if not required:
            if fewest:
                yield lambda: {}
            if optional:
                yield lambda: build(optional[:1])
            if extra is not False and (
                patterns or isinstance(extra, dict) or not props
            ):
                yield lambda: {
                    new_key(): self.value(
                        schema_of(new_key()),
                        f"{where}/{new_key()}".lstrip("/"),
                        depth + 1,
                    )
                }
            yield lambda: {}


def constant(value: Any) -> Callable[[], Any]:
    return lambda: value


def kind_of(schema: dict[str, Any]) -> str:
    """The JSON type a schema without `type` describes, from its other keywords."""
    keys = set(schema)
    if keys & {
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "minProperties",
    }:
        return "object"
    if keys & {"items", "prefixItems", "minItems", "maxItems"}:
        return "array"
    if keys & {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    }:
        return "number"
    return "string"


def number(schema: dict[str, Any], integer: bool) -> int | float:
    """1 when allowed, else a value inside the bounds (the nearest integer to 1, or a number between the bounds),
    rounded up to a multiple of multipleOf."""
    bounds = [
        schema.get(k)
        for k in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")
    ]
    low, above, high, below = [
        b if isinstance(b, (int, float)) and not isinstance(b, bool) else None
        for b in bounds
    ]
    lowest = max((b for b in (low, above) if b is not None), default=None)
    highest = min((b for b in (high, below) if b is not None), default=None)
    value: float = 1
    if integer:
        least = (
            low
            if above is None or low is not None and low > above
            else math.floor(above) + 1
        )
        most = (
            high
            if below is None or high is not None and high < below
            else math.ceil(below) - 1
        )
        value = max(value, math.ceil(least)) if least is not None else value
        value = min(value, math.floor(most)) if most is not None else value
    elif (
        lowest is not None
        and (value < lowest or value == above)
        or highest is not None
        and (value > highest or value == below)
    ):
        if lowest is not None and highest is not None:
            value = (lowest + highest) / 2
        else:
            value = (
                lowest + 1
                if lowest is not None
                else highest - 1 if highest is not None else value
            )
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0:
        value = math.ceil(value / step) * step
    return int(value) if integer else value


REGEX_SAMPLES: dict[str, str] = {}


def from_regex(pattern: str, fits: Callable[[str], bool], key: str) -> str:
    """A simple string matching `pattern` that fits: the first that hypothesis generates (derandomized, so the
    same every run) from printable ASCII, else from any printable characters; `key` names the fit (cache). Never
    one ending in a newline: Python's `$` matches before it (hypothesis offers one), a JSON Schema pattern's not.
    """
    key = f"{pattern}\0{key}"
    if key not in REGEX_SAMPLES:
        from hypothesis import HealthCheck, Phase, find, settings, strategies

        options = settings(
            derandomize=True,
            database=None,
            max_examples=200,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        problem = ""
        for alphabet in (
            strategies.characters(min_codepoint=32, max_codepoint=126),
            strategies.characters(exclude_categories=["Cc", "Cs"]),
        ):
            try:
                REGEX_SAMPLES[key] = find(
                    strategies.from_regex(re.compile(pattern), alphabet=alphabet),
                    lambda text: not text.endswith("\n") and fits(text),
                    settings=options,
                )
                break
            except Exception as exc:  # no match found, or a pattern Python cannot read
                problem = type(exc).__name__
        else:
            raise NoSample(f"no string found for pattern {pattern!r} ({problem})")
    return REGEX_SAMPLES[key]


BUILT: dict[str, dict[str, Any] | str] = {}


def sample(schema: Any, defs: dict[str, Any]) -> Any:
    """A value that meets `schema` (whose $defs are `defs`), e.g. for a mock answer; None when none can be built."""
    try:
        return Sampler(defs).value(schema)
    except NoSample:
        return None


def built(tool: dict[str, Any]) -> dict[str, Any] | str:
    """The tool's sample arguments (checked against its inputSchema), or why none could be built."""
    name = tool["name"]
    if name not in BUILT:
        schema = tool["inputSchema"]
        sampler = Sampler(schema.get("$defs", {}))
        try:
            arguments = sampler.value(schema, fewest=True)
            problem = (
                None
                if isinstance(arguments, dict)
                else "the arguments are not an object"
            )
            problem = problem or sampler.problem(schema, arguments)
        except NoSample as exc:
            problem = str(exc)
        except (
            Exception
        ) as exc:  # e.g. RecursionError: still a reason, never a crash of the whole module
            problem = f"{type(exc).__name__}: {str(exc)[:100]}"
        BUILT[name] = problem or arguments
    return BUILT[name]


def buildable(tool: dict[str, Any]) -> bool:
    return isinstance(built(tool), dict)


def arguments_for(tool: dict[str, Any]) -> dict[str, Any]:
    """The tool's sample arguments (a copy); the test is skipped, with the reason, when none can be built.
    An argument a client profile made required only to send null for "absent" (routes.json `restore`) is null.
    """
    arguments = built(tool)
    if isinstance(arguments, str):
        pytest.skip(
            f"no valid arguments could be built for {tool['name']}: {arguments}"
        )
    absent = ROUTES[tool["name"]].get("restore") or {}
    return {
        key: None if absent.get(key, {}).get("absent") else value
        for key, value in copy.deepcopy(arguments).items()
    }


def callable_here(tool: dict[str, Any]) -> bool:
    """False for a tool whose every security alternative is one this server cannot send."""
    alternatives = ROUTES[tool["name"]].get("security") or [{}]
    return any(usable(alternative) for alternative in alternatives)


def method(tool: dict[str, Any]) -> str:
    return str(ROUTES[tool["name"]]["method"])


def first(*conditions: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    """The first callable tool (tools.json order) meeting every condition that has sample arguments; None when
    no callable tool meets them; the test is skipped when those that do all lack sample arguments.
    """
    suiting = [t for t in CALLABLE if all(condition(t) for condition in conditions)]
    found = next((t for t in suiting if buildable(t)), None)
    if found is None and suiting:
        names = ", ".join(t["name"] for t in suiting[:5])
        pytest.skip(
            f"no valid arguments could be built for the tools that suit this check ({names})"
        )
    return found


def idempotent(tool: dict[str, Any]) -> bool:
    return method(tool) in IDEMPOTENT


CALLABLE = [tool for tool in TOOLS if callable_here(tool)]


def target() -> dict[str, Any]:
    """The tool most checks call: the first callable one, an idempotent one if there is one (retries apply)."""
    tool = first(idempotent) or first()
    if (
        tool is None
    ):  # every tool needs security this server cannot send (test_every_tool... checks them)
        pytest.skip("no tool of this API can be called by this server")
    return tool


def path_pattern(template: str) -> re.Pattern[str]:
    path = template.split("#", 1)[0].split("?", 1)[
        0
    ]  # a fragment is never sent; a query in the key is the query's
    parts = re.split(r"{[^}]+}", path)
    return re.compile("^" + "[^/?#]+".join(re.escape(p) for p in parts) + "$")


def args_in(tool: dict[str, Any], *places: str) -> list[str]:
    """The tool's arguments that the route sends in `places` (path, query, header, cookie)."""
    return [
        arg["arg"]
        for arg in ROUTES[tool["name"]].get("args", [])
        if arg.get("in") in places
    ]


async def test_lists_every_tool() -> None:
    async with Client(server(Recorder()), mode="legacy") as client:
        listed = (await client.list_tools()).tools
    assert [t.name for t in listed] == [t["name"] for t in TOOLS]
    assert len({t.name for t in listed}) == len(listed)
    for tool, expected in zip(listed, TOOLS):
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]{0,63}", tool.name)
        assert tool.input_schema["type"] == "object"
        # annotations as generated: every tool has its title there; a hint left out has its MCP default
        # (an x-mcp-annotations or config override may set openWorldHint = false)
        assert (
            tool.annotations is not None
            and tool.annotations.title == expected["annotations"]["title"]
        )
        open_world = tool.annotations.open_world_hint
        assert (True if open_world is None else open_world) is expected[
            "annotations"
        ].get("openWorldHint", True)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_every_tool_sends_its_operation(mode: str) -> None:
    """Each tool, called with its required arguments, sends one request for its method and path; a tool
    whose security this server cannot send answers with an error saying so, and sends nothing.
    """
    recorder = Recorder(status=204)
    failures = []
    async with Client(server(recorder), mode=mode) as client:
        for tool in filter(buildable, TOOLS):  # the others: see test_sample_arguments
            route = ROUTES[tool["name"]]
            recorder.requests.clear()
            result = await client.call_tool(tool["name"], arguments_for(tool))
            if tool not in CALLABLE:
                if (
                    not result.is_error
                    or recorder.requests
                    or "cannot be called" not in text_of(result)
                ):
                    failures.append(
                        f"{tool['name']} (security not sendable): {result.content}"
                    )
                continue
            if result.is_error or len(recorder.requests) != 1:
                failures.append(f"{tool['name']}: {result.content}")
                continue
            request = recorder.requests[0]
            if method(tool) != request.method or not path_pattern(route["path"]).match(
                request.url.raw_path.decode().split("?")[0]
            ):
                failures.append(
                    f"{tool['name']}: sent {request.method} {request.url}, expected {route['method']} {route['path']}"
                )
    assert not failures, "\n".join(failures)


def test_sample_arguments() -> None:
    """Every tool has sample arguments that its inputSchema accepts; a tool whose schema the builder cannot
    satisfy (a pattern Python cannot read, a required property the schema forbids, ...) is named with the
    reason and the test is skipped: the checks above leave it out."""
    missing = {
        tool["name"]: reason for tool in TOOLS if isinstance(reason := built(tool), str)
    }
    for tool in filter(
        buildable, TOOLS
    ):  # checked with jsonschema when built: checked again here
        assert (
            Sampler(tool["inputSchema"].get("$defs", {})).problem(
                tool["inputSchema"], built(tool)
            )
            is None
        )
    if missing:
        listed = "; ".join(
            f"{name}: {reason}" for name, reason in list(missing.items())[:10]
        )
        pytest.skip(
            f"no valid arguments could be built for {len(missing)} of {len(TOOLS)} tools: {listed}"
        )


async def test_api_error_is_a_tool_error_with_status_reason_and_truncated_body() -> (
    None
):
    tool = target()
    recorder = Recorder(status=500, body=b"boom " * 2000, content_type="text/plain")
    async with Client(server(recorder, retries=2), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    text = text_of(result)
    assert result.is_error and text.startswith(
        "HTTP 500 Internal Server Error from the API:"
    )
    assert "boom boom" in text and "[truncated" in text and len(text) < 4500
    assert len(recorder.requests) == 1  # a 500 is not retried


async def test_unreachable_api_is_a_tool_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    tool = target()
    async with Client(server(Recorder(answer=refuse)), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "Could not connect" in text_of(result)


async def test_unknown_tool_is_a_protocol_error() -> None:
    async with Client(server(Recorder()), mode="legacy") as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("no_such_tool", {})
    assert caught.value.error.code == types.INVALID_PARAMS


async def test_missing_required_argument_is_named() -> None:
    tool = next((t for t in TOOLS if t["inputSchema"].get("required")), None)
    recorder = Recorder()
    async with Client(server(recorder), mode="legacy") as client:
        if (
            tool is None
        ):  # no tool of this API has a required argument: an empty call is valid for all
            assert all(not t["inputSchema"].get("required") for t in TOOLS)
            return
        result = await client.call_tool(tool["name"], {})
    assert result.is_error and not recorder.requests
    assert "Invalid arguments" in text_of(result)
    for name in tool["inputSchema"]["required"]:
        assert repr(name) in text_of(result), name


def wrong_arguments(tool: dict[str, Any]) -> dict[str, Any]:
    schema = tool["inputSchema"]
    props, defs = schema.get("properties", {}), schema.get("$defs", {})
    wrong = {k: v for k, p in props.items() if (v := wrong_value(p, defs)) is not None}
    # a multipart file may be a plain base64 string: a number is what it never accepts
    return wrong | {k: 1.5 for k in file_args(tool) if isinstance(wrong.get(k), str)}


async def test_arguments_of_the_wrong_type_are_listed_field_by_field() -> None:
    tool = next((t for t in TOOLS if wrong_arguments(t)), None)
    if tool is None:  # no argument of any tool has a type or enum to break
        assert not any(wrong_arguments(t) for t in TOOLS)
        return
    arguments = wrong_arguments(tool)
    recorder = Recorder()
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments)
    assert result.is_error and not recorder.requests
    for key in arguments:
        assert f"- {key}" in text_of(result) or repr(key) in text_of(result), key


async def test_one_audit_line_per_call(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    tool = target()
    route = ROUTES[tool["name"]]
    async with Client(server(Recorder(status=204)), mode="legacy") as client:
        await client.call_tool(tool["name"], arguments_for(tool))
    lines = [r.getMessage() for r in caplog.records if r.name.endswith(".audit")]
    assert len(lines) == 1
    assert (
        f"tool={tool['name']} method={route['method']} path={route['path']} status=204"
        in lines[0]
    )
    assert "retries=0" in lines[0] and "ms=" in lines[0]


# -- security -----------------------------------------------------------------------------------------
def carries(request: httpx.Request, key: str, secrets: dict[str, str]) -> bool:
    """Whether `request` carries scheme `key`'s credential where the spec says."""
    scheme = SCHEMES[key]
    env = scheme["env"]
    sent: str | None
    if scheme["kind"] == "basic":
        pair = f"{secrets[env['username']]}:{secrets[env['password']]}"
        sent, expected = (
            request.headers.get("authorization"),
            "Basic " + base64.b64encode(pair.encode()).decode(),
        )
        return sent == expected
    value: str = secrets.get(env["token"], "")
    if scheme["kind"] == "apiKey":
        if scheme["in"] == "query":
            sent = request.url.params.get(scheme["name"])
        elif scheme["in"] == "cookie":
            return f"{scheme['name']}={value}" in request.headers.get("cookie", "")
        else:
            sent = request.headers.get(scheme["name"])
        return sent == value
    return str(request.headers.get("authorization", "")).endswith(" " + value)


def secrets_for(alternative: list[str]) -> dict[str, str]:
    """Only the credentials of the schemes in `alternative` (a client-credentials scheme: its token)."""
    names = [
        v
        for k in alternative
        for kind, v in SCHEMES[k]["env"].items()
        if kind in ("token", "username", "password")
    ]
    return {name: SECRETS[name] for name in names}


def alternative_with(key: str) -> tuple[dict[str, Any], list[str]] | None:
    """The first tool and alternative using `key` that this server sends and no earlier alternative pre-empts
    (a tool with sample arguments first)."""
    found: list[tuple[dict[str, Any], list[str]]] = []
    for tool in TOOLS:
        earlier: list[set[str]] = []
        for alt in ROUTES[tool["name"]].get("security", []):
            if key in alt and usable(alt) and not any(e <= set(alt) for e in earlier):
                if buildable(tool):
                    return tool, list(alt)
                found.append((tool, list(alt)))
            earlier.append(set(alt))
    return found[0] if found else None


async def test_each_security_scheme_is_applied_as_declared() -> None:
    """Each scheme some tool can use is sent where the spec says, alone or with its AND partners."""
    checked, not_sendable = [], []
    for key in SCHEMES:
        found = alternative_with(key)
        if (
            found is None
        ):  # every requirement naming it is unsupported, clashing or pre-empted: see below
            not_sendable.append(key)
            continue
        tool, alternative = found
        # bearer-token schemes of one requirement share the Authorization header: configure one of them (`key`)
        bearers = [k for k in alternative if authorization_family(k) == "bearer"]
        alternative = [
            k
            for k in alternative
            if k not in bearers or k == (key if key in bearers else bearers[0])
        ]
        secrets = secrets_for(alternative)
        recorder = Recorder()
        async with Client(
            server(recorder, credentials=secrets), mode="legacy"
        ) as client:
            result = await client.call_tool(tool["name"], arguments_for(tool))
        assert not result.is_error, text_of(result)
        assert len(recorder.requests) == 1 and all(
            carries(recorder.requests[0], k, secrets) for k in alternative
        ), key
        checked.append(key)
    for (
        key
    ) in (
        not_sendable
    ):  # a scheme no tool can send with: each requirement naming it has a reason
        for tool in TOOLS:
            security = ROUTES[tool["name"]].get("security", [])
            for index, alt in enumerate(security):
                if key in alt:
                    assert not usable(alt) or any(
                        set(e) <= set(alt) for e in security[:index]
                    ), (key, alt)
    assert sorted(checked + not_sendable) == sorted(SCHEMES)


async def test_client_credentials_token_is_fetched_once_and_reused() -> None:
    """A client-credentials scheme fetches its token once (client_secret_basic) and reuses it."""
    schemes = [
        k for k, s in SCHEMES.items() if "client_id" in s["env"] and alternative_with(k)
    ]
    if not schemes:
        assert not any(
            "client_id" in s["env"] and alternative_with(k) for k, s in SCHEMES.items()
        )
    for key in schemes:
        found = alternative_with(key)
        assert found is not None
        tool, alternative = found
        env = SCHEMES[key]["env"]
        others = [
            k for k in alternative if k != key and authorization_family(k) != "bearer"
        ]  # one token is sent
        secrets = secrets_for(others)
        secrets |= {
            env["client_id"]: "app-id",
            env["client_secret"]: "app-secret-value",
        }

        def answer(request: httpx.Request) -> httpx.Response:
            if b"grant_type=client_credentials" in request.content:
                return httpx.Response(
                    200, json={"access_token": "tok-from-server", "expires_in": 3600}
                )
            return httpx.Response(204)

        recorder = Recorder(answer=answer)
        async with Client(
            server(recorder, credentials=secrets), mode="legacy"
        ) as client:
            for _ in range(2):
                result = await client.call_tool(tool["name"], arguments_for(tool))
                assert not result.is_error, text_of(result)
        token_requests = [r for r in recorder.requests if b"grant_type" in r.content]
        api_requests = [r for r in recorder.requests if b"grant_type" not in r.content]
        assert len(token_requests) == 1 and len(api_requests) == 2
        assert (
            token_requests[0].headers["authorization"]
            == "Basic " + base64.b64encode(b"app-id:app-secret-value").decode()
        )
        assert all(
            r.headers["authorization"] == "Bearer tok-from-server" for r in api_requests
        )


def needs_credentials(tool: dict[str, Any]) -> bool:
    security = ROUTES[tool["name"]].get("security") or []
    return bool(security) and all(
        security
    )  # secured, and no `{}` alternative making it optional


async def test_missing_credentials_name_the_variable_and_send_nothing() -> None:
    tool = first(needs_credentials)
    recorder = Recorder()
    async with Client(server(recorder, credentials={}), mode="legacy") as client:
        if (
            tool is None
        ):  # no callable tool of this API needs credentials: all of them work without any
            assert not any(needs_credentials(t) for t in CALLABLE)
            for other in CALLABLE[:1]:
                assert not (
                    await client.call_tool(other["name"], arguments_for(other))
                ).is_error
            return
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and not recorder.requests
    assert "not configured: set " in text_of(result)
    alternatives = [alt for alt in ROUTES[tool["name"]]["security"] if usable(alt)]
    for alternative in alternatives:  # each alternative's variables are named
        assert all(
            name in text_of(result) for name in secrets_for(alternative)
        ), alternative


async def test_secrets_never_reach_results_or_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    echo = " ".join(SECRETS.values()).encode()
    recorder = Recorder(status=400, body=b'{"error": "bad credentials: ' + echo + b'"}')
    async with Client(server(recorder), mode="legacy") as client:
        for tool in filter(buildable, TOOLS):
            if ROUTES[tool["name"]].get("security"):
                sent = len(recorder.requests)
                result = await client.call_tool(tool["name"], arguments_for(tool))
                assert result.is_error and not any(
                    secret in text_of(result) for secret in SECRETS.values()
                )
                if (
                    len(recorder.requests) > sent
                ):  # the API's answer echoed every secret
                    assert "***" in text_of(result)
        # a successful answer echoing the secrets: masked in the text and in the structured content
        tool = first(lambda t: bool(ROUTES[t["name"]].get("security"))) or target()
        recorder.status, recorder.body = (
            200,
            json.dumps({"echo": list(SECRETS.values())}).encode(),
        )
        result = await client.call_tool(tool["name"], arguments_for(tool))
    shown = text_of(result) + json.dumps(result.structured_content)
    assert not result.is_error and not any(
        secret in shown for secret in SECRETS.values()
    )
    assert "***" in text_of(result) or not SECRETS
    assert not any(secret in caplog.text for secret in SECRETS.values())


async def test_schemes_sharing_the_authorization_header_are_not_combined(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An AND requirement of two schemes that both use the Authorization header (basic + bearer) cannot be
    sent: another alternative is used instead, or the call is an error saying why."""
    env = {"username": "ZZ_USER", "password": "ZZ_PASSWORD"}
    monkeypatch.setitem(
        SCHEMES,
        "zz_basic",
        {"kind": "basic", "type": "http", "scheme": "basic", "env": env},
    )
    monkeypatch.setitem(
        SCHEMES,
        "zz_bearer",
        {
            "kind": "http",
            "type": "http",
            "scheme": "bearer",
            "env": {"token": "ZZ_TOKEN"},
        },
    )
    monkeypatch.setitem(
        SCHEMES,
        "zz_key",
        {
            "kind": "apiKey",
            "type": "apiKey",
            "in": "header",
            "name": "X-Key",
            "env": {"token": "ZZ_KEY"},
        },
    )
    monkeypatch.setitem(
        SCHEMES,
        "zz_oauth",
        {
            "kind": "oauth2",
            "type": "oauth2",
            "scheme": "",
            "env": {"token": "ZZ_OAUTH"},
        },
    )
    credentials = {
        "ZZ_USER": "u",
        "ZZ_PASSWORD": "p",
        "ZZ_TOKEN": "bearer-value",
        "ZZ_KEY": "key-value",
    }

    async def no_token(
        url: str, form: dict[str, str], user: str, password: str
    ) -> tuple[int, Any]:
        raise AssertionError("no token is fetched")

    auth = Auth(credentials, no_token, BASE_URL)
    request = Request("GET", "/x", {}, None)
    clash: dict[str, list[str]] = {"zz_basic": [], "zz_bearer": []}
    assert (
        uses_authorization("zz_basic")
        and uses_authorization("zz_bearer")
        and not uses_authorization("zz_key")
    )
    assert not usable(clash) and usable({"zz_bearer": [], "zz_key": []})
    with pytest.raises(AuthError) as caught:
        await auth.apply([clash], request)
    assert "cannot be called" in str(caught.value) and "Authorization header" in str(
        caught.value
    )
    sent = await auth.apply(
        [clash, {"zz_key": [], "zz_bearer": []}], request
    )  # OR: falls through
    assert sent.headers == {
        "X-Key": "key-value",
        "Authorization": "Bearer bearer-value",
    }
    with pytest.raises(AuthError) as missing:
        await Auth({}, no_token, BASE_URL).apply([clash, {"zz_key": []}], request)
    assert "set ZZ_KEY" in str(missing.value) and "Authorization header" in str(
        missing.value
    )
    # bearer tokens (http bearer, OAuth2, OpenID Connect) required together share one header: any one will do
    tokens: dict[str, list[str]] = {"zz_bearer": [], "zz_oauth": []}
    assert (
        usable(tokens)
        and authorization_family("zz_oauth")
        == authorization_family("zz_bearer")
        == "bearer"
    )
    assert (await auth.apply([tokens], request)).headers == {
        "Authorization": "Bearer bearer-value"
    }
    only_oauth = await Auth({"ZZ_OAUTH": "oauth-value"}, no_token, BASE_URL).apply(
        [tokens], request
    )
    assert only_oauth.headers == {"Authorization": "Bearer oauth-value"}
    with pytest.raises(AuthError) as neither:
        await Auth({}, no_token, BASE_URL).apply([tokens], request)
    assert "set ZZ_TOKEN or ZZ_OAUTH in" in str(neither.value)
    # the same through the server, for this API's own clashing requirements
    recorder = Recorder()
    async with Client(server(recorder), mode="legacy") as client:
        for tool in filter(buildable, TOOLS):
            security = ROUTES[tool["name"]].get("security") or []
            if any(not usable(alt) for alt in security):
                result = await client.call_tool(tool["name"], arguments_for(tool))
                assert result.is_error is (tool not in CALLABLE), text_of(result)
    for (
        request_sent
    ) in (
        recorder.requests
    ):  # one Authorization header at most, never two credentials in one
        assert len(request_sent.headers.get_list("authorization")) <= 1


def wrong_value(schema: Any, defs: dict[str, Any]) -> Any:
    """A value `schema` rejects for its type or enum; None when it accepts anything."""
    for _ in range(8):
        if not isinstance(schema, dict):
            return None
        if "$ref" in schema:
            schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
        elif isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
            schema = schema["allOf"][0]
        else:
            break
    kinds = schema.get("type") if isinstance(schema, dict) else None
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if not kinds:
        return (
            "surely-not-an-allowed-value"
            if isinstance(schema, dict) and schema.get("enum")
            else None
        )
    for value, kind in (
        ("text", "string"),
        (1.5, "number"),
        (True, "boolean"),
        ([1], "array"),
        ({"a": 1}, "object"),
    ):
        if kind not in kinds:
            return value
    return None


# -- arguments and safety -----------------------------------------------------------------------------
def test_path_arguments_cannot_change_the_path() -> None:
    route = Route.from_json(
        {
            "method": "GET",
            "path": "/items/{id}/detail",
            "args": [{"arg": "id", "name": "id", "in": "path"}],
            "body": None,
        }
    )
    for trick in (
        "../admin",
        "a/../../b",
        "x?admin=1",
        "x#frag",
        "%2F..%2F",
        "..",
        "http://elsewhere.test/",
    ):
        target = build_request(route, {"id": trick}).target
        assert (
            target.startswith("/items/")
            and target.endswith("/detail")
            and target.count("/") == 3
        ), target
        assert "?" not in target and "#" not in target and "/../" not in target
    assert build_request(route, {"id": "."}).target == "/items/%2E/detail"
    assert build_request(route, {"id": ".."}).target == "/items/%2E%2E/detail"
    assert (
        build_request(route, {"id": "..."}).target == "/items/.../detail"
    )  # not a dot segment: as is
    # and httpx sends them as they are (no dot-segment removal of the encoded form)
    request = httpx.Request(
        "GET", "http://api.test" + build_request(route, {"id": ".."}).target
    )
    assert request.url.raw_path == b"/items/%2E%2E/detail"


def string_args(tool: dict[str, Any], *places: str) -> list[str]:
    """Arguments sent in `places` whose schema is a plain string (no enum, pattern or format to refuse a trick)."""
    props = tool["inputSchema"].get("properties", {})
    plain = {"type": "string"}
    return [
        a
        for a in args_in(tool, *places)
        if {
            k: v
            for k, v in props.get(a, {}).items()
            if k in ("type", "enum", "pattern", "format", "$ref")
        }
        == plain
    ]


async def test_path_tricks_in_a_tool_argument_stay_in_the_template() -> None:
    tool = first(lambda t: bool(string_args(t, "path"))) or first(
        lambda t: bool(args_in(t, "path"))
    )
    if (
        tool is None
    ):  # no tool of this API has a path argument: the test above covers the encoding
        assert not any(args_in(t, "path") for t in CALLABLE)
        return
    name = (string_args(tool, "path") or args_in(tool, "path"))[0]
    pattern = path_pattern(ROUTES[tool["name"]]["path"])
    recorder = Recorder()
    async with Client(server(recorder), mode="legacy") as client:
        for trick in (
            "../../admin",
            "x?admin=1#f",
            "%2F..%2Fetc",
            "http://elsewhere.test/x",
            ".",
            "..",
        ):
            recorder.requests.clear()
            result = await client.call_tool(
                tool["name"], arguments_for(tool) | {name: trick}
            )
            if (
                result.is_error
            ):  # the argument's schema refused the value: nothing was sent
                assert not recorder.requests and "Invalid arguments" in text_of(result)
                continue
            (request,) = recorder.requests
            raw = request.url.raw_path.decode().split("?")[0]
            assert (
                request.url.host == "api.test"
                and pattern.match(raw)
                and "/../" not in raw
            ), raw
            segments = raw.split("/")
            assert (
                "." not in segments and ".." not in segments
            ), raw  # sent as %2E and %2E%2E


def test_header_values_with_line_breaks_are_refused() -> None:
    route = Route.from_json(
        {
            "method": "GET",
            "path": "/x",
            "args": [{"arg": "h", "name": "X-Thing", "in": "header"}],
            "body": None,
        }
    )
    for value in ("a\r\nX-Injected: 1", "a\nb", "a\rb"):
        with pytest.raises(ArgumentError):
            build_request(route, {"h": value})


async def test_line_breaks_in_a_header_or_cookie_argument_are_refused() -> None:
    tool = first(lambda t: bool(string_args(t, "header", "cookie"))) or first(
        lambda t: bool(args_in(t, "header", "cookie"))
    )
    if (
        tool is None
    ):  # no tool of this API takes a header or cookie argument: the test above covers it
        assert not any(args_in(t, "header", "cookie") for t in CALLABLE)
        return
    name = (string_args(tool, "header", "cookie") or args_in(tool, "header", "cookie"))[
        0
    ]
    recorder = Recorder()
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(
            tool["name"], arguments_for(tool) | {name: "x\r\nX-Injected: yes"}
        )
    assert result.is_error and not recorder.requests, text_of(result)
    assert "line break" in text_of(result) or "Invalid arguments" in text_of(result)


async def test_health_endpoint_and_mcp_token() -> None:
    async def inner(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"inner"})

    app = guard(inner, "the-mcp-token", len(TOOLS))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    ) as http:
        health = await http.get("/healthz")
        assert health.status_code == 200 and health.json()["status"] == "ok"
        assert (await http.post("/mcp")).status_code == 401
        assert (
            await http.post("/mcp", headers={"Authorization": "Bearer wrong"})
        ).status_code == 401
        allowed = await http.post(
            "/mcp", headers={"Authorization": "Bearer the-mcp-token"}
        )
        assert allowed.status_code == 200 and allowed.text == "inner"


# -- OAuth resource server (HTTP transport) ------------------------------------------------------------
ISSUER = "http://issuer.test"
AUDIENCE = "http://127.0.0.1:8000/mcp"


class FakeIssuer:
    """An authorization server: RFC 8414 metadata, a key set of one ES256 key, RFC 8693 token exchange."""

    def __init__(self) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec

        self.key = ec.generate_private_key(ec.SECP256R1())
        self.jwk: dict[str, Any] = jwt.algorithms.ECAlgorithm.to_jwk(
            self.key.public_key(), as_dict=True
        )
        self.jwk.update(kid="k1", use="sig", alg="ES256")
        self.exchanges: list[dict[str, str]] = []

    def token(
        self,
        subject: str,
        audience: str | None = AUDIENCE,
        scope: str = "",
        **claims: Any,
    ) -> str:
        now = int(time.time())
        payload = {
            "iss": ISSUER,
            "sub": subject,
            "exp": now + 300,
            "iat": now,
            "scope": scope,
            **claims,
        }
        if audience is not None:
            payload["aud"] = audience
        return jwt.encode(payload, self.key, algorithm="ES256", headers={"kid": "k1"})

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/oauth-authorization-server":
            metadata = {
                "issuer": ISSUER,
                "jwks_uri": f"{ISSUER}/jwks",
                "token_endpoint": f"{ISSUER}/token",
            }
            return httpx.Response(200, json=metadata)
        if request.url.path == "/jwks":
            return httpx.Response(200, json={"keys": [self.jwk]})
        if request.url.path == "/token":
            form = dict(
                pair.split("=", 1) for pair in request.content.decode().split("&")
            )
            assert (
                form["grant_type"]
                == "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange"
            )
            subject = jwt.decode(
                form["subject_token"], options={"verify_signature": False}
            )["sub"]
            self.exchanges.append(
                {"sub": subject, "auth": request.headers.get("authorization", "")}
            )
            return httpx.Response(
                200,
                json={"access_token": f"exchanged-for-{subject}", "expires_in": 300},
            )
        return httpx.Response(404)


def oauth_app(
    recorder: Recorder, issuer: FakeIssuer, **options: Any
) -> tuple[Any, Any]:
    """(MCP server, guarded HTTP app) as an OAuth resource server; `issuer` answers for ISSUER's host."""

    async def both(request: httpx.Request) -> httpx.Response:
        return (
            issuer(request)
            if request.url.host == "issuer.test"
            else await recorder(request)
        )

    transport = httpx.MockTransport(both)
    settings = replace(
        Settings(base_url=BASE_URL, retries=0, credentials=SECRETS),
        auth_issuer=ISSUER,
        auth_audience=AUDIENCE,
        **options,
    )
    mcp_server = build_server(settings, transport)
    return mcp_server, http_app(mcp_server, settings, auth_transport=transport)


def scoped_tool() -> tuple[dict[str, Any], list[str]] | None:
    """The first tool whose every security alternative lists OAuth2 scopes, with the first one's scopes."""
    for tool in TOOLS:
        security = ROUTES[tool["name"]].get("security") or []
        needed = [
            [
                s
                for key, scopes in alt.items()
                if SCHEMES.get(key, {}).get("kind") == "oauth2"
                for s in scopes
            ]
            for alt in security
        ]
        if needed and all(needed):
            return tool, needed[0]
    return None


async def test_oauth_metadata_401_and_token_checks() -> None:
    issuer, recorder = FakeIssuer(), Recorder()
    mcp_server, app = oauth_app(recorder, issuer)
    async with mcp_server.session_manager.run():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8000"
        ) as http:
            for path in (
                "/.well-known/oauth-protected-resource",
                "/.well-known/oauth-protected-resource/mcp",
            ):
                metadata = (await http.get(path)).json()
                assert metadata["resource"] == AUDIENCE and metadata[
                    "authorization_servers"
                ] == [ISSUER]
            call = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": TOOLS[0]["name"]},
            }
            headers = {"Accept": "application/json, text/event-stream"}
            refused = await http.post("/mcp", json=call, headers=headers)
            assert refused.status_code == 401
            expected = 'resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"'
            assert expected in refused.headers["www-authenticate"]
            forged = issuer.token("eve").rsplit(".", 1)[0] + ".AAAA"
            unsigned = issuer.token("eve").split(".")[1]
            for bad in (
                issuer.token("eve", audience="http://elsewhere.test/mcp"),
                issuer.token("eve", exp=int(time.time()) - 600),
                issuer.token("eve", iss="http://evil.test"),
                forged,
                base64.urlsafe_b64encode(b'{"alg":"none"}').decode().rstrip("=")
                + "."
                + unsigned
                + ".",
            ):
                answer = await http.post(
                    "/mcp",
                    json=call,
                    headers={**headers, "Authorization": f"Bearer {bad}"},
                )
                assert (
                    answer.status_code == 401
                    and "invalid_token" in answer.headers["www-authenticate"]
                )
            found = scoped_tool()
            if (
                found is not None
            ):  # a tool whose OAuth2 security lists scopes needs them
                tool, scopes = found
                call["params"] = {
                    "name": tool["name"],
                    "arguments": arguments_for(tool),
                }
                token = issuer.token("eve", scope="unrelated")
                answer = await http.post(
                    "/mcp",
                    json=call,
                    headers={**headers, "Authorization": f"Bearer {token}"},
                )
                assert (
                    answer.status_code == 403
                    and 'error="insufficient_scope"'
                    in answer.headers["www-authenticate"]
                )
                token = issuer.token("eve", scope=" ".join(scopes))
                answer = await http.post(
                    "/mcp",
                    json=call,
                    headers={**headers, "Authorization": f"Bearer {token}"},
                )
                assert answer.status_code == 200
    assert len(recorder.requests) == (
        1 if scoped_tool() else 0
    )  # only the call with the scopes got through


async def test_an_unreachable_issuer_is_503_not_401() -> None:
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    settings = replace(
        Settings(base_url=BASE_URL), auth_issuer=ISSUER, auth_audience=AUDIENCE
    )
    mcp_server = build_server(settings, httpx.MockTransport(down))
    app = http_app(mcp_server, settings, auth_transport=httpx.MockTransport(down))
    token = FakeIssuer().token("eve")
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000"
    ) as http:
        answer = await http.post(
            "/mcp", json={}, headers={"Authorization": f"Bearer {token}"}
        )
    assert (
        answer.status_code == 503
        and answer.headers["retry-after"]
        and token not in answer.text
    )


def bearer_tool() -> dict[str, Any] | None:
    """The first tool whose first security alternative sends a bearer token (http bearer, OAuth2)."""
    for tool in TOOLS:
        security = [
            alt
            for alt in ROUTES[tool["name"]].get("security") or []
            if alt and usable(alt)
        ]
        if security and any(
            authorization_family(key) == "bearer" for key in security[0]
        ):
            return tool
    return None


@pytest.mark.parametrize("mode", ["exchange", "passthrough"])
async def test_upstream_gets_each_callers_token(mode: str) -> None:
    tool = bearer_tool()
    if (
        tool is None
    ):  # no tool sends a bearer token first (none, or only beside other schemes): nothing to swap
        pytest.skip("no tool's first usable security alternative sends a bearer token")
    issuer, recorder = FakeIssuer(), Recorder()
    mcp_server, app = oauth_app(
        recorder,
        issuer,
        upstream_auth=mode,
        oauth_client_id="server-id",
        oauth_client_secret="server-secret",
    )
    granted = " ".join(
        sorted(
            {
                s
                for alt in ROUTES[tool["name"]]["security"]
                for v in alt.values()
                for s in v
            }
        )
    )
    tokens = {user: issuer.token(user, scope=granted) for user in ("alice", "bob")}
    async with mcp_server.session_manager.run():
        for user in ("alice", "bob", "alice"):
            headers = {"Authorization": f"Bearer {tokens[user]}"}
            http = httpx2.AsyncClient(
                transport=httpx2.ASGITransport(app=app), headers=headers
            )
            async with http, Client(
                streamable_http_client(AUDIENCE, http_client=http), mode="legacy"
            ) as client:
                result = await client.call_tool(tool["name"], arguments_for(tool))
                assert not result.is_error, text_of(result)
    sent = [request.headers["authorization"] for request in recorder.requests]
    if mode == "exchange":
        assert sent == [
            "Bearer exchanged-for-alice",
            "Bearer exchanged-for-bob",
            "Bearer exchanged-for-alice",
        ]
        assert [e["sub"] for e in issuer.exchanges] == [
            "alice",
            "bob",
        ]  # cached per subject
        assert (
            issuer.exchanges[0]["auth"]
            == "Basic " + base64.b64encode(b"server-id:server-secret").decode()
        )
    else:
        assert (
            sent == [f"Bearer {tokens[user]}" for user in ("alice", "bob", "alice")]
            and not issuer.exchanges
        )


async def test_without_an_http_caller_the_environments_credentials_are_sent() -> None:
    """stdio (and any in-process client) has no caller token: every mode sends the environment's credential."""
    tool = bearer_tool()
    if tool is None:
        return
    key = next(
        k
        for k in ROUTES[tool["name"]]["security"][0]
        if authorization_family(k) == "bearer"
    )
    recorder = Recorder()
    settings = {
        "upstream_auth": "exchange",
        "auth_issuer": ISSUER,
        "oauth_client_id": "id",
        "oauth_client_secret": "s",
    }
    async with Client(server(recorder, **settings), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert not result.is_error, text_of(result)
    assert (
        recorder.requests[0].headers["authorization"]
        == f"Bearer {SECRETS[SCHEMES[key]['env']['token']]}"
    )


def test_upstream_auth_settings_are_checked_at_start_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with pytest.raises(SystemExit, match="needs --auth-issuer"):
        check_oauth(replace(Settings(), upstream_auth="exchange"))
    with pytest.raises(SystemExit, match="OAUTH_CLIENT_ID"):
        check_oauth(replace(Settings(), upstream_auth="exchange", auth_issuer=ISSUER))
    with caplog.at_level(logging.WARNING):
        check_oauth(
            replace(Settings(), upstream_auth="passthrough", auth_issuer=ISSUER)
        )
    assert "passthrough" in caplog.text and "forbids" in caplog.text
    with pytest.raises(SystemExit, match="UPSTREAM_AUTH"):
        Settings.from_env({f"{ENV_PREFIX}_UPSTREAM_AUTH": "forward"})


# -- timeouts, retries, limits, cancellation, progress ------------------------------------------------
async def test_timeouts_are_tool_errors() -> None:
    def read_timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    cancelled: list[bool] = []

    async def hang(request: httpx.Request) -> httpx.Response:
        try:
            await anyio.sleep(30)
        finally:
            cancelled.append(True)
        raise AssertionError("the total timeout did not stop the request")

    tool = target()
    async with Client(
        server(Recorder(answer=read_timeout), timeout=0.5), mode="legacy"
    ) as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "no data for 0.5 s (read timeout)" in text_of(result)
    async with Client(
        server(Recorder(answer=hang), timeout=0.05), mode="legacy"
    ) as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert (
        result.is_error
        and "within the total timeout of 0.05 s" in text_of(result)
        and cancelled
    )


def answers_then_ok(*first_answers: httpx.Response) -> Answer:
    return script(*first_answers, httpx.Response(204))


async def test_429_is_retried_honouring_retry_after_with_progress_and_log() -> None:
    """An idempotent call waits as Retry-After says; a client that sent a progressToken hears of the retry
    and, while waiting, of the wait; the client's log level gets the retry notice."""
    messages: list[str] = []
    logs: list[Any] = []

    async def on_progress(
        progress: float, total: float | None, message: str | None
    ) -> None:
        messages.append(message or "")

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    tool = target()
    recorder = Recorder(
        answer=answers_then_ok(httpx.Response(429, headers={"Retry-After": "0.1"}))
    )
    busy_api = server(recorder, retries=2, progress_interval=0.02)
    async with Client(busy_api, mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level("info")
        result = await client.call_tool(
            tool["name"], arguments_for(tool), progress_callback=on_progress
        )
    if not idempotent(
        tool
    ):  # no tool of this API is idempotent: a 429 to a POST is not retried
        assert not any(idempotent(t) for t in CALLABLE)
        assert (
            result.is_error
            and "HTTP 429" in text_of(result)
            and len(recorder.requests) == 1
        )
        return
    assert not result.is_error and len(recorder.requests) == 2
    assert recorder.times[1] - recorder.times[0] >= 0.09  # waited as the API asked
    retry = messages.index("HTTP 429; retry 1 of 2 in 0.1 s")
    assert any(
        m.startswith("waiting for the API") for m in messages[retry + 1 :]
    )  # heartbeat during the wait
    assert any(isinstance(d, dict) and d.get("retry") == 1 for d in logs)


async def test_log_notifications_honour_the_client_level() -> None:
    logs: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    tool = target()
    recorder = Recorder(
        answer=answers_then_ok(httpx.Response(503, headers={"Retry-After": "0"}))
    )
    async with Client(
        server(recorder, retries=1), mode="legacy", logging_callback=on_log
    ) as client:
        await client.set_logging_level("error")
        await client.call_tool(tool["name"], arguments_for(tool))
    assert (
        logs == []
    )  # a retry notice is "info" and a non-idempotent 503 a "warning": below "error"


async def test_retries_are_bounded() -> None:
    tool = first(idempotent)
    recorder = Recorder(
        answer=lambda request: httpx.Response(
            503, headers={"Retry-After": "0"}, text="busy"
        )
    )
    if tool is None:  # nothing idempotent to retry
        assert not any(idempotent(t) for t in CALLABLE)
        return
    async with Client(server(recorder, retries=2), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "503" in text_of(result) and len(recorder.requests) == 3


async def test_non_idempotent_call_is_not_retried() -> None:
    tool = first(lambda t: not idempotent(t))
    recorder = Recorder(status=503, body=b"busy")
    if tool is None:  # every callable tool is idempotent (retried: see above)
        assert all(idempotent(t) for t in CALLABLE)
        return
    async with Client(server(recorder, retries=3), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "503" in text_of(result) and len(recorder.requests) == 1


async def test_refused_connection_is_retried_for_any_method() -> None:
    def refuse_once(request: httpx.Request) -> httpx.Response:
        if len(recorder.requests) == 1:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(204)

    tool = first(lambda t: not idempotent(t)) or target()
    recorder = Recorder(answer=refuse_once)
    async with Client(server(recorder, retries=1), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert (
        not result.is_error and len(recorder.requests) == 2
    )  # it never reached the API: safe to resend


async def test_connection_reset() -> None:
    def reset(request: httpx.Request) -> httpx.Response:
        if len(recorder.requests) == 1:
            raise httpx.ReadError("connection reset by peer", request=request)
        return httpx.Response(204)

    tool = target()
    recorder = Recorder(answer=reset)
    async with Client(server(recorder, retries=0), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "(connection reset)" in text_of(result)
    recorder = Recorder(answer=reset)
    async with Client(server(recorder, retries=1), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    if idempotent(tool):  # resent once, then answered
        assert not result.is_error and len(recorder.requests) == 2
    else:  # it may have reached the API: not resent (no tool of this API is idempotent)
        assert (
            result.is_error
            and len(recorder.requests) == 1
            and not any(idempotent(t) for t in CALLABLE)
        )


async def test_cancelling_a_call_cancels_the_upstream_request() -> None:
    started, cancelled = anyio.Event(), anyio.Event()

    async def hang(request: httpx.Request) -> httpx.Response:
        started.set()
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        return httpx.Response(204)

    tool = target()
    async with Client(server(Recorder(answer=hang)), mode="legacy") as client:
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, tool["name"], arguments_for(tool))
            with anyio.fail_after(5):
                await started.wait()
            group.cancel_scope.cancel()  # the client gives up: it sends notifications/cancelled
        with anyio.fail_after(5):
            await cancelled.wait()


async def test_rate_limit_spaces_requests() -> None:
    tool = target()
    recorder = Recorder(status=204)
    async with Client(
        server(recorder, rate_limit=20.0), mode="legacy"
    ) as client:  # one per 50 ms
        started = time.monotonic()
        for _ in range(4):
            assert not (
                await client.call_tool(tool["name"], arguments_for(tool))
            ).is_error
        elapsed = time.monotonic() - started
    # the 4th request may start 3 intervals after the 1st at the earliest (a busy machine only adds time)
    assert len(recorder.requests) == 4 and elapsed >= 0.15, elapsed


async def test_connection_limit_caps_requests_in_flight() -> None:
    in_flight, most, released = 0, 0, False
    pair, overflow = anyio.Event(), anyio.Event()

    async def slow(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, most, released
        in_flight += 1
        most = max(most, in_flight)
        if in_flight == 2:
            pair.set()
        if in_flight > 2:
            overflow.set()
        if (
            not released
        ):  # the first two requests (the cap lets 2 through) meet, then wait for a third
            with anyio.move_on_after(5):
                await pair.wait()
            with anyio.move_on_after(
                0.2
            ):  # without the cap, the other 3 would arrive meanwhile
                await overflow.wait()
            released = True
        in_flight -= 1
        return httpx.Response(204)

    tool = target()
    recorder = Recorder(answer=slow)
    async with Client(server(recorder, max_connections=2), mode="legacy") as client:
        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(client.call_tool, tool["name"], arguments_for(tool))
    assert len(recorder.requests) == 5 and most == 2


async def test_long_call_reports_progress_when_asked() -> None:
    heard = anyio.Event()

    async def slow(request: httpx.Request) -> httpx.Response:
        if heard.is_set():  # later calls: a 100 ms wait
            await anyio.sleep(0.1)
        with anyio.move_on_after(
            5
        ):  # the first: the API answers once the client has heard progress (5 s at most)
            await heard.wait()
        return httpx.Response(204)

    messages: list[str] = []

    async def on_progress(
        progress: float, total: float | None, message: str | None
    ) -> None:
        messages.append(message or "")
        heard.set()

    tool = target()
    async with Client(
        server(Recorder(answer=slow), progress_interval=0.02), mode="legacy"
    ) as client:
        result = await client.call_tool(
            tool["name"], arguments_for(tool), progress_callback=on_progress
        )
        assert not result.is_error and messages  # every 20 ms while the API is silent
        assert all(m.startswith("waiting for the API (") for m in messages), messages
        messages.clear()
        await client.call_tool(
            tool["name"], arguments_for(tool)
        )  # no progressToken: no progress
    async with Client(
        server(Recorder(answer=slow), progress_interval=0), mode="legacy"
    ) as client:
        await client.call_tool(
            tool["name"], arguments_for(tool), progress_callback=on_progress
        )
    assert messages == []  # an interval of 0 turns the heartbeat off


# -- responses ----------------------------------------------------------------------------------------
async def test_redirects_stay_on_the_api_host() -> None:
    tool = target()
    path = ROUTES[tool["name"]]["path"]
    away = Recorder(
        answer=lambda request: httpx.Response(
            302, headers={"Location": "http://elsewhere.test/steal"}
        )
    )
    async with Client(server(away), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert result.is_error and "redirected to another host (elsewhere.test)" in text_of(
        result
    )
    assert [r.url.host for r in away.requests] == ["api.test"]

    def moved(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/moved-here":
            return httpx.Response(204)
        return httpx.Response(307, headers={"Location": "/moved-here"})

    within = Recorder(answer=moved)
    async with Client(server(within), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert not result.is_error, text_of(result)
    assert [r.url.host for r in within.requests] == [
        "api.test"
    ] * 2 and within.requests[1].url.path == "/moved-here"
    assert within.requests[0].method == within.requests[1].method == method(tool), path


@pytest.mark.parametrize(
    ("content_type", "body", "kind"),
    [
        ("image/png", b"\x89PNG\r\n\x1a\n\x00\x00", types.ImageContent),
        ("application/octet-stream", bytes(range(256)), types.EmbeddedResource),
        ("text/plain", b"plain words", types.TextContent),
    ],
)
async def test_response_kinds(content_type: str, body: bytes, kind: type) -> None:
    tool = target()
    recorder = Recorder(status=200, body=body, content_type=content_type)
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert not result.is_error and isinstance(result.content[0], kind)
    block = result.content[0]
    if isinstance(block, types.ImageContent):
        assert base64.b64decode(block.data) == body and block.mime_type == content_type
    elif isinstance(block, types.EmbeddedResource):
        assert isinstance(block.resource, types.BlobResourceContents)
        assert (
            base64.b64decode(block.resource.blob) == body
            and block.resource.mime_type == content_type
        )
    else:
        assert text_of(result) == body.decode()


async def test_no_content_and_size_cap() -> None:
    tool = target()
    async with Client(server(Recorder(status=204)), mode="legacy") as client:
        assert (
            text_of(await client.call_tool(tool["name"], arguments_for(tool)))
            == "HTTP 204 No Content: success, no content."
        )
    big = Recorder(status=200, body=b"a" * 5000, content_type="text/plain")
    async with Client(server(big, max_response_bytes=1000), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert not result.is_error and text_of(result).startswith("a" * 1000)
    assert (
        "[truncated: the response has 5,000 bytes; only the first 1,000 are shown]"
        in text_of(result)
    )


async def test_off_spec_json_still_reaches_the_client() -> None:
    """The official client raises when structured content breaks the output schema: it never does here."""
    tool = first(lambda t: bool(t.get("outputSchema")))
    if (
        tool is None
    ):  # no tool of this API declares an output schema: JSON comes back as text only
        assert not any(t.get("outputSchema") for t in TOOLS)
        tool = target()
        async with Client(
            server(Recorder(status=200, body=b'{"a": [1, "two"]}')), mode="legacy"
        ) as client:
            result = await client.call_tool(tool["name"], arguments_for(tool))
        assert (
            not result.is_error
            and result.structured_content is None
            and '"two"' in text_of(result)
        )
        return
    props = tool["outputSchema"].get("properties", {})
    odd = {key: {"unexpected": [1, "two"]} for key in props} | {
        "extra": {"unexpected": "kept"}
    }
    recorder = Recorder(status=200, body=json.dumps(odd).encode())
    for mode in ("legacy", "auto"):
        async with Client(server(recorder), mode=mode) as client:
            result = await client.call_tool(tool["name"], arguments_for(tool))
        assert not result.is_error and isinstance(result.structured_content, dict)
        assert "unexpected" in text_of(result)


# -- hostile answers and arguments --------------------------------------------------------------------
class Chunks(httpx.AsyncByteStream):
    """A streamed body (as from a socket): `chunks` one by one, `pause` seconds apart; counts what was pulled."""

    def __init__(self, chunks: list[bytes], pause: float = 0.0) -> None:
        self.chunks, self.pause, self.pulled = chunks, pause, 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            if self.pause:
                await anyio.sleep(self.pause)
            self.pulled += 1
            yield chunk


def gzip_bomb(gigabytes: int = 1) -> bytes:
    """`gzip, gzip` of `gigabytes` GB of zeros, a few KB long (the inner stream is one repeated block)."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    head = deflater.compress(block) + deflater.flush(zlib.Z_FULL_FLUSH)
    repeated = deflater.compress(block) + deflater.flush(zlib.Z_FULL_FLUSH)
    return gzip.compress(head + repeated * (1024 * gigabytes - 1), 9)


def streamed(
    body: bytes, headers: dict[str, str], size: int = 512, pause: float = 0.0
) -> tuple[Answer, Chunks]:
    """An answer whose body streams in `size`-byte chunks (httpx does not read or decode it beforehand)."""
    stream = Chunks([body[i : i + size] for i in range(0, len(body), size)], pause)
    return (lambda request: httpx.Response(200, headers=headers, stream=stream)), stream


async def test_stacked_gzip_bomb_stops_at_the_cap() -> None:
    bomb = gzip_bomb(1)
    assert len(bomb) < 10_000
    tool = target()
    answer, stream = streamed(
        bomb,
        {"content-type": "application/octet-stream", "content-encoding": "gzip, gzip"},
    )
    started = time.monotonic()
    async with Client(
        server(Recorder(answer=answer), max_response_bytes=10_000), mode="legacy"
    ) as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert not result.is_error and "[truncated: the response has more bytes" in text_of(
        result
    ), text_of(result)
    block = result.content[0]
    assert isinstance(block, types.EmbeddedResource) and isinstance(
        block.resource, types.BlobResourceContents
    )
    assert (
        base64.b64decode(block.resource.blob) == bytes(7_500)
        and len(block.resource.blob) <= 10_000
    )
    assert (
        stream.pulled < len(stream.chunks) and time.monotonic() - started < 5
    )  # stopped early, not 1 GB later


async def test_encodings_are_decoded_or_refused() -> None:
    tool = target()
    plain = b"plain words"
    text = {"content-type": "text/plain"}
    cases: list[tuple[bytes, str, str]] = [
        (gzip.compress(plain), "gzip", "plain words"),
        (gzip.compress(zlib.compress(plain)), "deflate, gzip", "plain words"),
        (
            zlib.compress(plain)[2:-4],
            "deflate",
            "plain words",
        ),  # raw deflate, as some servers send it
        (
            gzip.compress(gzip.compress(gzip.compress(plain))),
            "gzip, gzip, gzip",
            "encoded 3 times",
        ),
        (
            b"\x0b\x02\x80hi\x03",
            "br",
            "uses Content-Encoding 'br', which this server does not decode",
        ),
        (b"\x1f\x8b not gzip at all", "gzip", "is not valid gzip data"),
        (gzip.compress(plain)[:-12], "gzip", "ends in the middle of its gzip data"),
    ]
    for body, encoding, expected in cases:
        answer, _ = streamed(body, text | {"content-encoding": encoding}, size=7)
        async with Client(server(Recorder(answer=answer)), mode="legacy") as client:
            result = await client.call_tool(tool["name"], arguments_for(tool))
        if expected == "plain words":
            assert not result.is_error and text_of(result) == expected, (
                encoding,
                text_of(result),
            )
        else:
            assert result.is_error and expected in text_of(result), (
                encoding,
                text_of(result),
            )


async def test_size_cap_counts_what_reaches_the_client() -> None:
    tool = target()
    latin = Recorder(
        status=200, body=b"\xe9" * 800, content_type="text/plain; charset=latin-1"
    )
    async with Client(server(latin, max_response_bytes=1000), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    # 800 bytes upstream, 1,600 as UTF-8 text: cut at 1,000 bytes of text (500 characters)
    shown = text_of(result).split("\n[truncated")[0]
    assert (
        shown == "é" * 500
        and "[truncated: the response has 1,600 bytes; only the first 1,000 are shown]"
        in text_of(result)
    )
    image = Recorder(status=200, body=b"\x89PNG" + bytes(896), content_type="image/png")
    async with Client(server(image, max_response_bytes=1000), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    # 900 bytes upstream are 1,200 of base64: too long to be an image; the first 750 bytes as a blob, with a note
    block = result.content[0]
    assert isinstance(block, types.EmbeddedResource) and isinstance(
        block.resource, types.BlobResourceContents
    )
    assert len(
        block.resource.blob
    ) == 1000 and "only the first 750 are shown" in text_of(result)
    fits = Recorder(status=200, body=b"\x89PNG" + bytes(596), content_type="image/png")
    async with Client(server(fits, max_response_bytes=1000), mode="legacy") as client:
        assert isinstance(
            (await client.call_tool(tool["name"], arguments_for(tool))).content[0],
            types.ImageContent,
        )


async def test_invalid_json_is_a_tool_error_quoting_its_first_bytes() -> None:
    tool = target()
    secret = next(iter(SECRETS.values()), "no-secret")
    cases = [
        (
            b'{"id": 1, "name": ' + secret.encode() + b"\n" + b"x" * 500,
            "upstream sent invalid JSON",
        ),
        (b"[" * 100_000, "upstream sent invalid JSON (nested too deeply)"),
    ]
    for body, expected in cases:
        recorder = Recorder(
            status=200, body=body, content_type="application/json; charset=utf-8"
        )
        async with Client(server(recorder), mode="legacy") as client:
            result = await client.call_tool(tool["name"], arguments_for(tool))
        text = text_of(result)
        assert (
            result.is_error
            and expected in text
            and "first 200 bytes" in text
            and len(text) < 600
        ), text
        assert "\n" not in text.split("bytes")[-1] and (
            secret not in text or not SECRETS
        )


def without_background_compiles() -> None:
    """Each server compiles its argument and result checks in a thread 0.5 s after its first tools/list: a test
    that times a call cancels those of earlier servers (or waits for a running one), which would compete with it.
    """
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()
            thread.join(timeout=60)


async def test_timeout_is_one_deadline_for_the_whole_call() -> None:
    tool = target()
    # the body trickles for ~40 s, one byte per 0.02 s: a timeout per read would never fire, one deadline does
    drip, stream = streamed(
        b'{"a": "' + b"x" * 2000 + b'"}',
        {"content-type": "application/json"},
        size=1,
        pause=0.02,
    )
    without_background_compiles()
    started = time.monotonic()
    # 3 s: on a slow, busy machine the call's own start (a large API's checks) has taken over 1 s before any byte
    async with Client(
        server(Recorder(answer=drip), timeout=3.0), mode="legacy"
    ) as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    elapsed = time.monotonic() - started
    assert result.is_error and "within the total timeout of 3 s" in text_of(
        result
    ), text_of(result)
    assert 5 < stream.pulled < 2000 and elapsed < 8, (
        stream.pulled,
        elapsed,
    )  # cut mid-body, at the deadline
    busy = Recorder(
        answer=lambda request: httpx.Response(503, headers={"Retry-After": "0.1"})
    )
    without_background_compiles()
    started = time.monotonic()
    async with Client(server(busy, timeout=0.35, retries=10), mode="legacy") as client:
        result = await client.call_tool(tool["name"], arguments_for(tool))
    assert (
        result.is_error and time.monotonic() - started < 3
    )  # the retries' waits count too
    assert len(busy.requests) <= 4 if idempotent(tool) else len(busy.requests) == 1


def test_timeout_flag_and_variables() -> None:
    assert settings_from(parse_args(["--timeout", "7.5"]), {}).timeout == 7.5
    assert settings_from(parse_args([]), {f"{ENV_PREFIX}_TIMEOUT": "12"}).timeout == 12
    assert (
        settings_from(parse_args([]), {f"{ENV_PREFIX}_TOTAL_TIMEOUT": "40"}).timeout
        == 40
    )  # the older name
    both = {f"{ENV_PREFIX}_TIMEOUT": "12", f"{ENV_PREFIX}_TOTAL_TIMEOUT": "40"}
    assert settings_from(parse_args(["--timeout", "3"]), both).timeout == 3
    for wrong in ("0", "-1", "nan", "inf", "soon"):
        with pytest.raises(SystemExit):
            parse_args(["--timeout", wrong])
        with pytest.raises(SystemExit):
            Settings.from_env({f"{ENV_PREFIX}_TIMEOUT": wrong})


async def test_unknown_argument_names_the_closest_and_sends_nothing() -> None:
    tool = (
        first(
            lambda t: any(len(k) >= 3 for k in t["inputSchema"].get("properties", {}))
        )
        or target()
    )
    known = list(tool["inputSchema"].get("properties", {}))
    recorder = Recorder()
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(
            tool["name"], arguments_for(tool) | {"zz_not_an_argument": 1}
        )
        assert result.is_error and "'zz_not_an_argument': unknown argument" in text_of(
            result
        ), text_of(result)
        long_names = [k for k in known if len(k) >= 3 and k + "x" not in known]
        if (
            long_names
        ):  # a misspelling (one letter more) is answered with the name meant
            name = long_names[0]
            arguments = {k: v for k, v in arguments_for(tool).items() if k != name}
            result = await client.call_tool(tool["name"], arguments | {name + "x": 1})
            assert result.is_error and f"did you mean {name!r}?" in text_of(
                result
            ), text_of(result)
    assert not recorder.requests
    assert (
        tool["inputSchema"].get("additionalProperties", False) is False
    )  # names outside the schema are checked


def file_args(tool: dict[str, Any]) -> list[str]:
    return [
        arg["arg"] for arg in ROUTES[tool["name"]].get("args", []) if arg.get("file")
    ]


def multipart_parts(request: httpx.Request) -> dict[str, tuple[str, bytes]]:
    """name -> (Content-Type or "", content) of a multipart/form-data request."""
    boundary = request.headers["content-type"].split("boundary=")[1]
    parts: dict[str, tuple[str, bytes]] = {}
    for chunk in request.content.split(b"--" + boundary.encode())[1:-1]:
        head, _, data = chunk.strip(b"\r\n").partition(b"\r\n\r\n")
        name = re.search(rb'name="([^"]*)"', head)
        media = re.search(rb"Content-Type: ([^\r\n]*)", head)
        assert name is not None
        parts[name.group(1).decode()] = (media.group(1).decode() if media else "", data)
    return parts


async def test_multipart_file_as_a_plain_base64_string() -> None:
    tool = first(lambda t: bool(file_args(t)))
    if (
        tool is None
    ):  # no tool of this API uploads a file: the part types are checked below
        assert not any(file_args(t) for t in CALLABLE)
        return
    name = file_args(tool)[0]
    schema = tool["inputSchema"]["properties"][name]
    value: Any = base64.b64encode(b"file bytes").decode()
    recorder = Recorder()
    async with Client(server(recorder), mode="legacy") as client:
        result = await client.call_tool(
            tool["name"],
            arguments_for(tool)
            | {name: [value] if schema.get("type") == "array" else value},
        )
    assert not result.is_error, text_of(result)
    (request,) = recorder.requests
    wire = next(a["name"] for a in ROUTES[tool["name"]]["args"] if a["arg"] == name)
    assert multipart_parts(request)[wire][1] == b"file bytes"


def test_multipart_part_types() -> None:
    def route(content_type: str | None) -> Route:
        arg = {
            "arg": "f",
            "name": "f",
            "in": "body",
            "style": "form",
            "explode": True,
            "file": True,
        }
        if content_type is not None:
            arg["contentType"] = content_type
        return Route.from_json(
            {
                "method": "POST",
                "path": "/up",
                "args": [arg],
                "body": {
                    "mediaType": "multipart/form-data",
                    "arg": None,
                    "required": True,
                },
            }
        )

    def part_type(content_type: str | None, value: Any) -> str:
        request = build_request(route(content_type), {"f": value})
        wire = httpx.Request(
            "POST",
            "http://api.test/up",
            headers=request.headers,
            content=request.content,
        )
        return multipart_parts(wire)["f"][0]

    data = base64.b64encode(b"\x89PNG").decode()
    assert (
        part_type("image/png, image/jpeg", {"content": data}) == "image/png"
    )  # the first of a list
    assert (
        part_type("image/*, image/webp", {"content": data}) == "image/webp"
    )  # the first concrete one
    assert part_type("image/*", {"content": data}) == "application/octet-stream"
    assert part_type(None, data) == "application/octet-stream"  # a plain base64 string
    assert (
        part_type(
            "image/png, image/jpeg", {"content": data, "contentType": "image/jpeg"}
        )
        == "image/jpeg"
    )
    with pytest.raises(ArgumentError):
        build_request(route(None), {"f": "not base64!"})


# -- documentation ------------------------------------------------------------------------------------
class Reading(Mapping[str, str]):
    """An empty environment that records which variables are read."""

    def __init__(self) -> None:
        self.read: list[str] = []

    def __getitem__(self, key: str) -> str:
        self.read.append(key)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def test_help_and_readme_document_every_setting() -> None:
    environ = Reading()
    Settings.from_env(environ)
    assert environ.read and all(
        name.startswith(ENV_PREFIX + "_") for name in environ.read
    )
    assert set(CREDENTIAL_VARIABLES + OPTIONAL_VARIABLES) <= set(environ.read)
    help_text = environment_help()
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    example = (Path(__file__).parent.parent / ".env.example").read_text(
        encoding="utf-8"
    )
    assert all(
        f"# {name}=" in example for name in environ.read
    )  # .env.example lists every variable
    for text in (help_text, readme):
        for name in environ.read:
            assert (
                name in text
                or name in OPTIONAL_VARIABLES
                and f"{ENV_PREFIX}_<SCHEME>_TOKEN_URL" in text
            ), name
    assert (
        Settings.from_env({f"{ENV_PREFIX}_PROGRESS_INTERVAL": "0.25"}).progress_interval
        == 0.25
    )

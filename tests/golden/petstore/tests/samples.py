"""Sample arguments for the tests of the generated petstore server, built from each tool's inputSchema."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import Any
from urllib.parse import unquote

from sample_values import FORMATS, NoSample, constant, from_regex, kind_of, number

# Each tool is called with arguments built from its inputSchema: its required arguments, each the first
# value (in a fixed order of candidates) that jsonschema accepts for its schema, formats included. The
# whole set is checked against the inputSchema before any call, so a refusal by the server is a real
# failure; a tool for which no valid set can be built is left out of the checks (test_sample_arguments
# skips, naming it and the reason).
MAX_DEPTH = 12  # nesting of built values (a recursive schema ends here)
LOWER = ("minimum", "minLength", "minItems", "minProperties")
UPPER = ("maximum", "maxLength", "maxItems", "maxProperties")


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

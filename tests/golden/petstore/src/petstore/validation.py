"""JSON Schema checks of tool arguments (before any request) and of structured results.

An argument the tool does not take is an error too (naming the closest valid name), although the
input schemas do not say `additionalProperties: false`: a misspelled optional argument would otherwise
be dropped without a word.

The validators are compiled once per process: `warm()` imports `jsonschema` and compiles every tool's
schema (the server runs it in a background thread shortly after the first tools/list, so it delays
neither the start-up nor the first call) and a call that arrives earlier compiles them itself. A schema that cannot be compiled is not
enforced (the call goes ahead and a warning is logged once) rather than making the tool unusable.
"""

from __future__ import annotations

import difflib
import logging
import threading
from collections.abc import Mapping
from typing import Any

MAX_ERRORS = 20  # listed per call
MAX_MESSAGE = 200  # characters per listed error
MAX_NAMES = 20  # valid argument names listed when none is close to an unknown one

log = logging.getLogger(__name__.rsplit(".", 1)[0])


class Validators:
    def __init__(self, schemas: Mapping[str, Mapping[str, Any] | None]) -> None:
        self._schemas = schemas
        self._compiled: dict[str, Any] | None = None
        self._lock = threading.Lock()

    def warm(self) -> None:
        """Compile every schema (once; later calls return at once)."""
        with self._lock:
            if self._compiled is not None:
                return
            from jsonschema import validators

            compiled: dict[str, Any] = {}
            for name, schema in self._schemas.items():
                if schema is None:
                    continue
                try:
                    cls = validators.validator_for(
                        schema, default=validators.Draft202012Validator
                    )
                    compiled[name] = cls(schema)
                except (
                    Exception
                ) as exc:  # an unusual schema must not make the tool unusable
                    first = (
                        str(exc).splitlines()[0][:200]
                        if str(exc)
                        else type(exc).__name__
                    )
                    log.warning("schema of %s is not enforced: %s", name, first)
            self._compiled = compiled

    def _validator(self, name: str) -> Any:
        compiled = self._compiled
        if compiled is None:
            self.warm()
            compiled = self._compiled
            assert compiled is not None
        return compiled.get(name)

    def errors(self, name: str, instance: Any) -> list[str]:
        """What is wrong with `instance`, one line per problem; empty when it is valid."""
        unknown = self.unknown(name, instance)
        validator = self._validator(name)
        if validator is None:
            return unknown
        try:
            found = sorted(
                validator.iter_errors(instance),
                key=lambda e: [str(p) for p in e.absolute_path],
            )
        except Exception as exc:  # e.g. a pattern Python cannot compile
            log.warning(
                "schema of %s could not be checked: %s", name, type(exc).__name__
            )
            return unknown
        lines = unknown
        for error in found[:MAX_ERRORS]:
            where = "/".join(str(p) for p in error.absolute_path)
            message = (
                error.message
                if len(error.message) <= MAX_MESSAGE
                else error.message[:MAX_MESSAGE] + "…"
            )
            lines.append(f"{where or '(arguments)'}: {message}")
        if len(found) > MAX_ERRORS:
            lines.append(f"... and {len(found) - MAX_ERRORS} more")
        return lines

    def unknown(self, name: str, instance: Any) -> list[str]:
        """One line per argument the tool does not take, with the closest name it does take."""
        schema = self._schemas.get(name)
        if not isinstance(schema, Mapping) or not isinstance(instance, Mapping):
            return []
        if (
            schema.get("additionalProperties", False) is not False
        ):  # the schema itself allows other names
            return []
        properties = schema.get("properties")
        known = (
            [str(key) for key in properties] if isinstance(properties, Mapping) else []
        )
        lines = []
        for key in sorted(str(k) for k in instance if k not in known)[:MAX_ERRORS]:
            shown = repr(key) if len(key) <= 80 else repr(key[:80]) + "…"
            close = [
                k for k in known if k.lower() == key.lower()
            ] or difflib.get_close_matches(key[:200], known, n=1)
            if close:
                lines.append(f"{shown}: unknown argument; did you mean {close[0]!r}?")
            elif known:
                listed = ", ".join(known[:MAX_NAMES]) + (
                    ", …" if len(known) > MAX_NAMES else ""
                )
                lines.append(f"{shown}: unknown argument (this tool takes: {listed})")
            else:
                lines.append(f"{shown}: unknown argument (this tool takes none)")
        return lines

    def first_level_failures(
        self, name: str, instance: Mapping[str, Any]
    ) -> set[str] | None:
        """Top-level keys of `instance` with errors; None when the object itself is wrong."""
        validator = self._validator(name)
        if validator is None:
            return set()
        try:
            paths = [
                list(error.absolute_path) for error in validator.iter_errors(instance)
            ]
        except Exception:
            return set()
        if any(not path for path in paths):
            return None
        return {str(path[0]) for path in paths}

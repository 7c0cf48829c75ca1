"""openapi-spec-validator -> problems (never raises).

Findings are warnings: real-world specs are often slightly invalid and still usable, and the later
stages report (and skip) what they really cannot use. Each finding carries the JSON pointer of the
offending node.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice
from typing import Any
from urllib.parse import urldefrag

from ..problems import Level, Problem, join

MAX_FINDINGS = 200  # a broken generator of specs can produce thousands; the first ones tell the story


def validate(document: dict[str, Any], base_uri: str, retrieve: Callable[[str], Any] | None = None) -> list[Problem]:
    """`retrieve(uri)` gives the other documents `$ref`s name; the validator itself reads nothing (without
    `retrieve`, a `$ref` to another document stops validation with a warning)."""
    # imported here: large specs skip validation by default, and the import alone is a third of a small run
    from openapi_spec_validator import OpenAPIV2SpecValidator, OpenAPIV30SpecValidator, OpenAPIV31SpecValidator

    validator_class: Any
    if str(document.get("swagger", "")).startswith("2"):
        validator_class = OpenAPIV2SpecValidator
    elif str(document.get("openapi", "")).startswith("3.1"):
        validator_class = OpenAPIV31SpecValidator
    elif str(document.get("openapi", "")).startswith("3"):
        validator_class = OpenAPIV30SpecValidator
    else:
        return []  # normalize() reports what the document is not
    handler = _Handler(retrieve or _no_reads)
    handlers = {"<all_urls>": handler, "http": handler, "https": handler, "file": handler}
    validator_class = type(validator_class.__name__, (validator_class,), {"resolver_handlers": handlers})
    try:
        validator = validator_class(document, base_uri=base_uri)
        findings = list(islice(validator.iter_errors(), MAX_FINDINGS + 1))
    except RecursionError:
        return [Problem(Level.WARNING, "openapi-spec-validator gave up (schemas nested too deeply); not validated")]
    except Exception as exc:  # noqa: BLE001 - a validator crash on odd input must not stop generation
        return [Problem(Level.WARNING, f"openapi-spec-validator failed ({type(exc).__name__}: {exc}); not validated")]
    problems = [_problem(finding) for finding in findings[:MAX_FINDINGS]]
    if len(findings) > MAX_FINDINGS:
        problems.append(Problem(Level.WARNING, f"more than {MAX_FINDINGS} validation findings; the rest are not shown"))
    return problems


class _Handler:
    def __init__(self, retrieve: Callable[[str], Any]) -> None:
        self.retrieve = retrieve

    def __call__(self, uri: str) -> Any:
        return self.retrieve(urldefrag(uri)[0])


def _no_reads(uri: str) -> Any:
    raise LookupError(f"{uri} is not read by the validator")


def _problem(finding: Any) -> Problem:
    path = getattr(finding, "absolute_path", None) or getattr(finding, "path", None) or ()
    message = getattr(finding, "message", str(finding)).split("\n")[0]
    if len(message) > 300:
        message = message[:297] + "..."
    return Problem(Level.WARNING, f"invalid spec: {message}", join("", *path))

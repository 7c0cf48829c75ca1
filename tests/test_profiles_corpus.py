"""Every client profile over real specs: GitHub, Stripe and the CI corpus sample (test_corpus.sample_specs) map
with zero violations of the client's rules, tool-count caps aside (those are met by the discovery surface).

Cheap on purpose: each spec is analyzed once (load, normalize, map; no validation, rendering or server), then
every profile is applied to the same tools and checked."""

from __future__ import annotations

from collections import Counter

import pytest

from codegen.config import Config
from codegen.pipeline import analyze
from codegen.problems import Problem
from codegen.surface.profiles import CLIENTS, apply_profiles

from named_specs import named_spec
from test_corpus import corpus, sample_specs  # noqa: F401  (corpus: the fixture that installs it)

pytestmark = pytest.mark.slow


def violations(spec: str) -> dict[str, list[Problem]] | None:
    """The rules each client's profile could not meet on `spec`, caps left out (None: no tools)."""
    api, tools, problems = analyze(Config(spec=spec, validate=False))
    if api is None or not tools:
        return None
    found: dict[str, list[Problem]] = {}
    for client in CLIENTS:
        _, problems = apply_profiles(tools, [client], "server")
        found[client] = [p for p in problems if p.source == "tools.json" and "discovery surface" not in p.message]
    return found


def explain(found: dict[str, list[Problem]]) -> str:
    return "\n".join(
        f"{client}: {len(problems)}: {Counter(p.message.split(': ')[-1][:60] for p in problems).most_common(3)}"
        for client, problems in found.items()
        if problems
    )


@pytest.mark.parametrize("name", ["github", "stripe"])
def test_named_specs_fit_every_client(corpus: None, name: str) -> None:  # noqa: F811
    found = violations(named_spec(name))
    assert found is not None and not any(found.values()), found and explain(found)


def test_corpus_sample_fits_every_client(corpus: None) -> None:  # noqa: F811
    failures = []
    checked = 0
    for spec in sample_specs():
        found = violations(spec)
        if found is None:
            continue  # test_corpus reports a spec that does not generate
        checked += 1
        if any(found.values()):
            failures.append(f"{spec}\n{explain(found)}")
    assert checked >= 50 and not failures, "\n\n".join(failures)

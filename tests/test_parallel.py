"""Generation with helper processes (codegen/forked.py) writes the same package, warnings included, as without:
the discovery surface's search index, or the tools surface's handshake, made by a helper while the listing is
fitted and the package rendered (codegen/ahead.py), and made up for here when the helper fails. Real specs, the
real pipeline."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from codegen import ahead, forked
from codegen.config import Config
from codegen.pipeline import Result, generate

from conftest import PETSTORE
from named_specs import named_spec

pytestmark = pytest.mark.skipif(not forked.can_fork(), reason="helpers fork: Linux only")


@pytest.fixture
def helpers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Helpers allowed whatever the machine's load; yields the helpers ahead.py started (black's, which a cold cache
    may start too, aside)."""
    started: list[Any] = []

    class Counted(forked.Helper[Any]):
        def __init__(self, work: Any) -> None:
            super().__init__(work)
            if work.__qualname__.startswith("Ahead."):
                self.started_in = work.__qualname__.split(".")[1]  # the Ahead method that started it
                started.append(self)

    monkeypatch.delenv(forked.SWITCH, raising=False)
    monkeypatch.setattr(forked, "spare_cpu", lambda: True)
    monkeypatch.setattr(forked, "Helper", Counted)
    yield started


def outcome(result: Result) -> tuple[dict[str, Any], list[str]]:
    return dict(result.files), [str(problem) for problem in result.problems]


@pytest.fixture(scope="module")
def stripe() -> str:
    return named_spec("stripe")


def alone(config: Config) -> tuple[dict[str, Any], list[str]]:
    """The package generated with helpers off."""
    with pytest.MonkeyPatch.context() as patched:
        patched.setenv(forked.SWITCH, "0")
        return outcome(generate(config))


@pytest.fixture(scope="module")
def stripe_alone(stripe: str) -> tuple[dict[str, Any], list[str]]:
    """Stripe's package (discovery surface) generated with helpers off."""
    return alone(Config(spec=stripe, validate=False))


def test_the_search_index_built_by_a_helper_is_the_same(
    helpers: list[Any], stripe: str, stripe_alone: tuple[dict[str, Any], list[str]]
) -> None:
    files, problems = outcome(generate(Config(spec=stripe, validate=False)))
    assert any(path.endswith("/search.json") for path in files)
    assert len(helpers) == 1
    assert files == stripe_alone[0] and problems == stripe_alone[1]


def test_the_index_helper_starts_as_soon_as_the_tools_are_mapped(
    helpers: list[Any], stripe: str, stripe_alone: tuple[dict[str, Any], list[str]]
) -> None:
    """The index reads the tools as mapped: its helper starts before the listing is fitted, and writes the same
    search.json."""
    files, problems = outcome(generate(Config(spec=stripe, validate=False)))
    assert [helper.started_in for helper in helpers] == ["warm"]
    assert files == stripe_alone[0] and problems == stripe_alone[1]


def test_the_index_reads_the_tools_as_mapped_not_as_fitted(
    stripe: str, stripe_alone: tuple[dict[str, Any], list[str]]
) -> None:
    """Stripe's listing is too large with its output schemas: fitting it writes definitions in place and drops the
    result-shaping arguments' descriptions. search.json is the index of the tools before that, the index any API
    gets whether or not its listing had to be fitted."""
    from codegen.pipeline import analyze
    from codegen.surface.discovery import search_text

    _, mapped, _ = analyze(Config(spec=stripe, validate=False), fit=False)
    _, fitted, _ = analyze(Config(spec=stripe, validate=False))
    assert [tool.name for tool in mapped] == [tool.name for tool in fitted]
    assert [tool.input_schema for tool in mapped] != [tool.input_schema for tool in fitted]  # it was fitted
    (search,) = (text for path, text in stripe_alone[0].items() if path.endswith("/search.json"))
    written = search if isinstance(search, str) else search.decode("utf-8")
    assert written == search_text(mapped) + "\n" != search_text(fitted) + "\n"


def test_a_failed_index_helper_is_made_up_for(
    helpers: list[Any], monkeypatch: pytest.MonkeyPatch, stripe: str, stripe_alone: tuple[dict[str, Any], list[str]]
) -> None:
    parent = os.getpid()
    built = ahead.search_text

    def dies_in_the_helper(tools: Any) -> str:
        if os.getpid() != parent:
            os._exit(3)
        return built(tools)

    monkeypatch.setattr(ahead, "search_text", dies_in_the_helper)
    files, problems = outcome(generate(Config(spec=stripe, validate=False)))
    assert len(helpers) == 1
    assert files == stripe_alone[0] and problems == stripe_alone[1]


def test_the_handshake_made_by_a_helper_is_the_same(helpers: list[Any], stripe: str) -> None:
    config = Config(spec=stripe, validate=False, surface="tools")
    expected = alone(config)
    files, problems = outcome(generate(config))
    assert len(helpers) == 1 and any(path.endswith("/handshake.jsonl") for path in files)
    assert files == expected[0] and problems == expected[1]


def test_no_helper_for_a_small_api(helpers: list[Any]) -> None:
    generate(Config(spec=str(PETSTORE)))
    generate(Config(spec=str(PETSTORE), surface="tools"))
    generate(Config(spec=str(PETSTORE), surface="discovery"))
    assert helpers == []

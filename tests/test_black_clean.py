"""The templates render Python that black leaves as it is (issue 19): black then formats each file once, not twice.

black's format_str formats a text a second time whenever its first pass changed it; on a cold cache that second
pass was half of generation's formatting time. The generated files are still black's output (emit/format.py runs
black on every one of them), so a template edit that breaks this only costs time, and this test names the files.
The macros of templates/literals.jinja write spec data the way black does; they are checked against black itself.
"""

from __future__ import annotations

import difflib
from functools import cache
from pathlib import Path
from typing import Any

import black
import jinja2
import pytest

import codegen.pipeline
from codegen.config import Config
from codegen.emit.escape import FILTERS
from codegen.emit.files import Content
from codegen.emit.render import builtin_templates
from codegen.problems import Problem
from conftest import PETSTORE

MODE = black.Mode()  # what emit/format.py formats with

# the .py files rendered for the petstore fixture; every one comes out of the templates black-clean
TOOLS_FILES = {
    "src/petstore/__init__.py",
    "src/petstore/__main__.py",
    "src/petstore/auth.py",
    "src/petstore/decoding.py",
    "src/petstore/handshake.py",
    "src/petstore/greeting.py",
    "src/petstore/links.py",
    "src/petstore/oauth.py",
    "src/petstore/exchange.py",
    "src/petstore/paging.py",
    "src/petstore/requests.py",
    "src/petstore/plans.py",
    "src/petstore/styles.py",
    "src/petstore/bodies.py",
    "src/petstore/resource.py",
    "src/petstore/responses.py",
    "src/petstore/restore.py",
    "src/petstore/server.py",
    "src/petstore/calls.py",
    "src/petstore/pool.py",
    "src/petstore/catalog.py",
    "src/petstore/datafiles.py",
    "src/petstore/cli.py",
    "src/petstore/web.py",
    "src/petstore/settings.py",
    "src/petstore/shaping.py",
    "src/petstore/fitting.py",
    "src/petstore/stdio.py",
    "src/petstore/upstream.py",
    "src/petstore/retries.py",
    "src/petstore/validation.py",
    "tests/conftest.py",
    "tests/test_results.py",
    "tests/test_server.py",
    "tests/test_injection.py",
    "tests/support.py",
    "tests/samples.py",
    "tests/sample_values.py",
    "tests/test_security.py",
    "tests/test_oauth.py",
    "tests/test_limits.py",
    "tests/test_responses.py",
    "tests/test_hostile.py",
    "tests/test_hostile_input.py",
}
DISCOVERY_FILES = TOOLS_FILES | {
    "src/petstore/search.py",
    "src/petstore/query.py",
    "src/petstore/discovery.py",
    "tests/test_discovery.py",
}


def rendered(monkeypatch: pytest.MonkeyPatch, surface: str, name: str = "petstore") -> dict[str, str]:
    """The generated .py files as the templates render them, before black."""
    seen: dict[str, str] = {}

    def unformatted(files: dict[str, Content]) -> tuple[dict[str, Content], list[Problem]]:
        seen.update({path: text for path, text in files.items() if path.endswith(".py") and isinstance(text, str)})
        return dict(files), []

    monkeypatch.setattr(codegen.pipeline, "format_files", unformatted)
    monkeypatch.setenv("MCP_CODEGEN_CACHE", "off")
    codegen.pipeline.generate(Config(spec=str(PETSTORE), output=Path(name), surface=surface))  # type: ignore[arg-type]
    return seen


def blacks_changes(files: dict[str, str]) -> str:
    """'' when black leaves every file as it is; else the files it changes and the start of its first change."""
    changed = {path: black.format_str(text, mode=MODE) for path, text in files.items()}
    changed = {path: text for path, text in changed.items() if text != files[path]}
    if not changed:
        return ""
    path = min(changed)
    diff = difflib.unified_diff(files[path].splitlines(), changed[path].splitlines(), path, "black", lineterm="", n=1)
    return f"black reformats {sorted(changed)}; write the template lines as black writes them:\n" + "\n".join(
        list(diff)[:40]
    )


@pytest.mark.parametrize(("surface", "expected"), [("tools", TOOLS_FILES), ("discovery", DISCOVERY_FILES)])
def test_petstore_files_are_black_clean_as_rendered(
    monkeypatch: pytest.MonkeyPatch, surface: str, expected: set[str]
) -> None:
    files = rendered(monkeypatch, surface)
    assert set(files) == expected
    assert not (changes := blacks_changes(files)), changes


def test_long_package_names_stay_black_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lines naming the package (imports, logger names, the CLI) are written as black writes them when long."""
    files = rendered(monkeypatch, "discovery", "a-package-name-long-enough-to-push-every-line-naming-it-past-88")
    names = (
        "server.py",
        "catalog.py",
        "cli.py",
        "calls.py",
        "settings.py",
        "resource.py",
        "test_server.py",
        "test_results.py",
        "handshake.py",
    )
    assert not (changes := blacks_changes({p: t for p, t in files.items() if p.endswith(names)})), changes


@cache
def macros() -> Any:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(builtin_templates())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    return env.get_template("literals.jinja").module


def blackened(source: str) -> str:
    return black.format_str(source, mode=MODE)


STRINGS = ["", "plain", "it's", 'say "hi"', 'it\'s "both"', "a'b'c\"d", "back\\slash", "\\'", "tab\there", "é ✓"]


def test_q_is_the_literal_black_writes() -> None:
    for text in STRINGS:
        written = str(macros().q(text))
        assert eval(written) == text  # noqa: S307 - a literal the macro wrote
        assert blackened(f"x = {written}\n") == f"x = {written}\n"


def nested(width: int) -> list[Any]:
    """JSON-like values whose one-line form is about `width` characters, nested a few levels."""
    word = "w" * max(width // 6, 1)
    return [
        word * 6,
        {"key": word * 5, "n": 1, "f": 1.5, "b": True, "none": None},
        {"only": {"inner": [word, word * 2, {"deep": word * 3}]}},
        [word * 3, [word * 2, {"k": word}], []],
        {"env": {"token": word * 4}},
        [{"a": word * 5}],
        {},
    ]


def test_lit_writes_data_as_black_does() -> None:
    lit, q = macros().lit, macros().q
    for width in range(40, 140, 7):  # one line, or split at one or more levels
        for value in nested(width):
            for key in ("k", "a_longer_key_name"):
                head = f"    {q(key)}: "
                source = "X: dict[str, Any] = {\n" + head + str(lit(value, len(head), 1, 4)) + ",\n}\n"
                assert blackened(source) == source, source


def test_line_macros_break_where_black_does() -> None:
    module = macros()
    for width in range(60, 100):  # the lines cross 88 characters, and the wrapped forms too
        atom = str(module.q("v" * (width - 12)))
        names = ["Name" + str(i) for i in range(width // 10)]
        for source in (
            str(module.assign("VERSION = ", atom)),
            str(module.call("log = logging.getLogger", atom)),
            str(module.imports("package" + "x" * (width - 60) + ".settings", names)),
            str(module.one_per_line("VARIABLES: tuple[str, ...] = ", [atom])),
            str(module.one_per_line("VARIABLES: tuple[str, ...] = ", [atom, atom])),
            str(module.one_per_line("VARIABLES: tuple[str, ...] = ", [])),
        ):
            assert blackened(source + "\n") == source + "\n", source

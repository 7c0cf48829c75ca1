"""Hostile spec text never becomes code: it is generated, compiles, imports and runs `--help` inertly.

Every spec field that reaches a generated file (title, version, descriptions, server URL and description,
tag names, security scheme keys, header names and schemes, token URLs, parameter names, enum values,
operationId, summary, property names, path text) gets text built to break out of a string, a docstring,
a comment, a TOML value, a Dockerfile line or a Markdown table. Payloads that would run create a marker
file; it must never appear. Imports and `--help` run in a subprocess with the generated package alone.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen.config import Config
from codegen.emit.escape import doc, md, md_code, oneline, pystr, safe_url, toml
from codegen.pipeline import generate
from codegen.emit.write import write
from conftest import mini_spec, write_spec

OK = {"responses": {"200": {"description": "ok"}}}
MARKER = "@MARKER@"  # replaced by a real path in each generation
# quotes of every kind, escapes, control and separator characters, template syntax, format strings, code
NASTY: tuple[str, ...] = (
    "'",
    '"',
    "'''",
    '"""',
    "'''\n",
    '"""\nimport os\n',
    '"""\nimport os; open("@MARKER@", "w").close()\n"""',
    "'''\nopen('@MARKER@', 'w').close()\n'''",
    '"); open("@MARKER@", "w"); ("',
    "'); open('@MARKER@', 'w'); ('",
    '\\"); open("@MARKER@", "w")  #',
    '\n__import__("os").system("touch @MARKER@")\n',
    "\\",
    "x\\",
    "\\n\\x00\\u2028\\N{BULLET}\\",
    "\x00",
    "a\x00b",
    "\u2028",
    "\u2029",
    "\x85\x0b\x0c\r",
    "\x1b[2J\x1b]0;title\x07",
    "\u202eevil\u202c",
    "\ufeff",
    "{{ 7 * 7 }}",
    "{% raw %}{{ x }}{% endraw %}",
    "{# c #}",
    "%s %(prog)s %% %",
    "{0} {}",
    "]]\n[tool.evil]\nx = 1\n",
    '"\n[project.scripts]\nevil = "os:system"\n',
    "\nRUN touch @MARKER@\n",
    "` | <script>alert(1)</script> | ```\n# heading",
    "$(touch @MARKER@) `touch @MARKER@`",
    "é 中文 🙂 \u00a0\u3000",
    "x" * 5000,
    " leading and trailing ",
    "\t",
)
FIELDS = (
    "title",
    "version",
    "info_description",
    "server_path",
    "server_description",
    "tag",
    "tag_description",
    "api_key",
    "header_name",
    "http_scheme",
    "token_url",
    "scheme_description",
    "query_name",
    "header_param",
    "param_description",
    "enum",
    "operation_id",
    "summary",
    "description",
    "response_description",
    "property",
    "path_text",
)


def hostile_spec(values: dict[str, str], marker: Path) -> dict[str, Any]:
    """A spec with each field's hostile text (MARKER replaced by the marker file's path)."""
    v = {k: text.replace(MARKER, str(marker)) for k, text in values.items()}
    hostile_op = {
        "operationId": v["operation_id"],
        "summary": v["summary"],
        "description": v["description"],
        "tags": [v["tag"]],
        "parameters": [
            {"name": "id", "in": "path", "required": True, "schema": {"type": "string", "enum": [v["enum"], "x"]}},
            {
                "name": v["query_name"],
                "in": "query",
                "description": v["param_description"],
                "schema": {"type": "string"},
            },
            {"name": v["header_param"], "in": "header", "schema": {"type": "string"}},
        ],
        "requestBody": {
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "properties": {v["property"]: {"type": "string", "description": v["description"]}},
                    }
                }
            }
        },
        "responses": {"200": {"description": v["response_description"]}},
        "security": [{v["api_key"]: []}, {"bearer": []}, {"oauth": []}],
    }
    return mini_spec(
        {
            "/items/{id}/" + v["path_text"].replace("/", "_").replace("{", "(").replace("}", ")"): {"post": hostile_op},
            "/plain": {"get": {"operationId": "plain", "responses": {"200": {"description": "ok"}}}},
        },
        info={"title": v["title"], "version": v["version"], "description": v["info_description"]},
        servers=[{"url": "https://api.example.com/" + v["server_path"], "description": v["server_description"]}],
        tags=[{"name": v["tag"], "description": v["tag_description"]}],
        components={
            "securitySchemes": {
                v["api_key"]: {
                    "type": "apiKey",
                    "in": "header",
                    "name": v["header_name"],
                    "description": v["scheme_description"],
                },
                "bearer": {"type": "http", "scheme": v["http_scheme"] or "bearer"},
                "oauth": {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": v["token_url"], "scopes": {}}}},
            }
        },
    )


def generate_hostile(values: dict[str, str], folder: Path, name: str) -> Path:
    """Generate the hostile spec into folder/name and check every file statically; return the package folder."""
    marker = folder / f"{name}.marker"
    spec = write_spec(folder, hostile_spec(values, marker), f"{name}.json")
    result = generate(Config(spec=str(spec), output=folder / name, validate=False))
    assert result.files, [str(p)[:300] for p in result.problems]
    for path, text in result.files.items():
        if path.endswith(".py"):
            compile(text, path, "exec", dont_inherit=True)
    project = tomllib.loads(result.files["pyproject.toml"])["project"]
    assert set(project["scripts"]) == {name.replace("_", "-")}, project["scripts"]
    assert project["description"].startswith("MCP server for ")
    plain = [line for line in result.files["Dockerfile"].splitlines() if line and not line.startswith("#")]
    assert [line.split()[0] for line in plain] == DOCKERFILE_INSTRUCTIONS
    assert write(folder / name, result.files, force=False) == []
    return folder / name


DOCKERFILE_INSTRUCTIONS = [
    line.split()[0]
    for line in (Path(__file__).resolve().parents[1] / "templates" / "Dockerfile.jinja").read_text().splitlines()
    if line and not line.startswith("#")
]

# imports every module of each package and runs `--help`
RUN_PACKAGES = """
import contextlib, importlib, io, pkgutil, sys
for src in sys.argv[1:]:
    sys.path.insert(0, src + "/src")
    name = src.rsplit("/", 1)[1]
    package = importlib.import_module(name)
    for module in pkgutil.iter_modules(package.__path__):
        if module.name != "__main__":  # it runs the server
            importlib.import_module(name + "." + module.name)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        importlib.import_module(name + ".cli").main(["--help"])
    assert "usage:" in out.getvalue(), out.getvalue()
    print("ok", name)
"""


def run_packages(packages: list[Path], markers: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-c", RUN_PACKAGES, *map(str, packages)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=markers,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == [w for p in packages for w in ("ok", p.name)]
    assert not list(markers.rglob("*.marker")), "a payload from the spec ran"
    assert not (markers / "@MARKER@").exists()


# Every string of the table in every field, in four generations (black takes ~2 s a package): a field's
# text is a quarter of the table run together, then an ending (text that ends in a quote, a backslash, a
# line break or a tab is a case of its own).
ENDINGS = ('"', "x\\", "'''\n", "\t")


@pytest.mark.slow
def test_every_nasty_string_in_every_field_generates_inert_code(tmp_path: Path) -> None:
    groups = ["".join(NASTY[group :: len(ENDINGS)]) + ending for group, ending in enumerate(ENDINGS)]
    packages = [
        generate_hostile(dict.fromkeys(FIELDS, text), tmp_path, f"hostile_{i}") for i, text in enumerate(groups)
    ]
    run_packages(packages, tmp_path)


FIELD_TEXT = st.one_of(st.sampled_from(NASTY), st.text(max_size=40))


@pytest.mark.slow
def test_mixed_hostile_fields_generate_inert_code(tmp_path: Path) -> None:
    """Each field its own text (from the table or arbitrary); the packages are imported in one process."""
    packages: list[Path] = []

    @settings(max_examples=4, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.fixed_dictionaries({field: FIELD_TEXT for field in FIELDS}))
    def generated(values: dict[str, str]) -> None:
        packages.append(generate_hostile(values, tmp_path, f"mixed_{len(packages)}"))

    generated()
    run_packages(packages, tmp_path)


def test_issue_cases_import_cleanly(tmp_path: Path) -> None:
    """info.version ''' + newline; a security scheme key with \"\"\", a newline and `import os`."""
    values = dict.fromkeys(FIELDS, "plain")
    values.update(version="'''\n", api_key='"""\nimport os\n')
    package = generate_hostile(values, tmp_path, "issue")
    auth = (package / "src" / "issue" / "auth.py").read_text(encoding="utf-8")
    assert "\nimport os\n" not in auth
    tree = ast.parse(auth)
    assert '"""\nimport os\n' in ast.literal_eval(ast.unparse(_schemes_node(tree)))
    catalog = (package / "src" / "issue" / "catalog.py").read_text(encoding="utf-8")
    assert "VERSION = \"'''\\n\"" in catalog


def _schemes_node(tree: ast.Module) -> ast.expr:
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "SCHEMES":
            assert node.value is not None
            return node.value
    raise AssertionError("no SCHEMES in auth.py")


# -- the filters themselves -------------------------------------------------------------------------

UNSAFE_IN_ONE_LINE = set("\r\n\x00\x0b\x0c\x1b\x85\u2028\u2029\u202e\ufeff")


@settings(max_examples=300, derandomize=True)
@given(st.one_of(st.sampled_from(NASTY), st.text()))
def test_filters_keep_any_text_inert(text: str) -> None:
    assert ast.literal_eval(pystr(text)) == text
    value = ast.literal_eval(f'"""{doc(text)}"""')  # a docstring holding it ends where the template says
    assert not UNSAFE_IN_ONE_LINE.intersection(value) and '"""' not in value
    assert value.count("\\") == text.count("\\")  # a backslash stays a backslash, never starts an escape
    assert tomllib.loads(f"x = {toml(text)}")["x"] == text
    for line in (oneline(text), md(text), md_code(text), safe_url(text)):
        assert not UNSAFE_IN_ONE_LINE.intersection(line)
    assert not set(' "`<>').intersection(safe_url(text))


@pytest.mark.parametrize("text", ["Swagger Petstore", "1.0.27", "Bob's API: v2 (beta) — café", "a 'quoted' word"])
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert doc(text) == oneline(text) == md(text) == text
    assert md_code(text) == f"`{text}`"
    assert safe_url("https://api.example.com/v1?x=1&y=[2]") == "https://api.example.com/v1?x=1&y=[2]"


# -- a template that lets text through: an internal error naming it, and nothing written ------------


def test_code_that_does_not_compile_is_an_internal_error_naming_the_template(tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    # black cannot parse the first; black parses the second, compile refuses it
    (templates / "__init__.py.jinja").write_text('"""{{ api.title }}"""\n', encoding="utf-8")
    (templates / "__main__.py.jinja").write_text("{{ api.version }}\n", encoding="utf-8")
    spec = write_spec(tmp_path, mini_spec({"/a": {"get": OK}}, info={"title": '"""\nx = (', "version": "break"}))
    result = generate(Config(spec=str(spec), output=tmp_path / "out", templates=templates))
    assert not result.files
    messages = sorted(p.message for p in result.problems if p.message.startswith("internal error"))
    assert len(messages) == 2, messages
    assert messages[0].startswith("internal error: generated src/out/__init__.py is not valid Python; template")
    assert "__init__.py.jinja" in messages[0]
    assert messages[1].startswith("internal error: generated src/out/__main__.py (line 1) is not valid Python")
    assert "__main__.py.jinja" in messages[1] and "'break' outside loop" in messages[1]


# -- path templates that climb ---------------------------------------------------------------------


def test_dot_segments_in_a_path_template_are_refused(tmp_path: Path) -> None:
    name = {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
    spec = write_spec(
        tmp_path,
        mini_spec(
            {
                "/files/{name}": {"get": {"operationId": "get_file", "parameters": [name], **OK}},
                "/files/{name}/../admin": {"get": {"operationId": "climb", "parameters": [name], **OK}},
                "/files/./x": {"delete": {"operationId": "dot", **OK}},
                "/files/%2E%2e/x": {"put": {"operationId": "encoded", **OK}},
                "/files/..x/a.b/...": {"get": {"operationId": "dots_in_names", **OK}},
            }
        ),
    )
    result = generate(Config(spec=str(spec), output=tmp_path / "out"))
    assert sorted(tool.name for tool in result.tools) == ["dots_in_names", "get_file"]
    warnings = [str(p) for p in result.problems if "URL normalization" in p.message]
    assert len(warnings) == 3
    assert any("GET /files/{name}/../admin: the path has a '..' segment" in w for w in warnings)
    assert any("DELETE /files/./x" in w for w in warnings) and any("PUT /files/%2E%2e/x" in w for w in warnings)

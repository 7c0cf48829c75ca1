"""Tool text for models: verb-first titles, HTML -> Markdown, link URLs, cutting at sentences, what the
description leaves to the schema, destructive POSTs, no empty `body`, and what the listing leaves out."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from codegen.config import Config, Override
from codegen.pipeline import analyze
from codegen.problems import Level
from codegen.surface import annotations, prose, titles
from codegen.surface import listing as listing_module
from codegen.surface.listing import fit_listing, listing_tokens
from codegen.surface.plans import ToolSpec
from codegen.surface.profiles.refs import inline_refs
from codegen.surface.tokens import count_tokens
from conftest import mini_spec, write_spec
from named_specs import named_spec


def tools_of(tmp_path: Path, paths: dict[str, Any], **options: Any) -> tuple[dict[str, ToolSpec], list[Any]]:
    api, tools, problems = analyze(Config(spec=str(write_spec(tmp_path, mini_spec(paths))), **options))
    return {t.name: t for t in tools}, problems


def ok(**fields: Any) -> dict[str, Any]:
    return {"responses": {"200": {"description": "ok"}}, **fields}


# -- titles ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("summary", "method", "path", "expected"),
    [
        ("Create an issue", "POST", "/repos/{owner}/{repo}/issues", "Create an issue"),  # already good: kept
        ("Create an issue.", "POST", "/issues", "Create an issue"),
        ("Returns pet inventories by status", "GET", "/store/inventory", "Return pet inventories by status"),
        ("Lists the repositories", "GET", "/repos", "List the repositories"),
        ("Updated user", "PUT", "/user/{name}", "Update user"),
        ("Re-run a workflow", "POST", "/runs/{id}/rerun", "Rerun a workflow"),
        ("Rerequest a check run", "POST", "/check-runs/{id}/rerequest", "Rerequest a check run"),  # unknown verb
        ("Force cancel a workflow run", "POST", "/runs/{id}/force-cancel", "Force cancel a workflow run"),
        ("Historic aggregates", "GET", "/aggregates", "Get historic aggregates"),  # a noun phrase gets a verb
        ("IP Blocklist", "GET", "/blocklist", "Get IP Blocklist"),  # an acronym keeps its case
        ("Team game stats", "DELETE", "/stats/{id}", "Delete team game stats"),
        ("Closing down - List classrooms", "GET", "/classrooms", "List classrooms"),
        ("(Deprecated) List editorial categories", "GET", "/categories", "List editorial categories"),
    ],
)
def test_titles_from_summaries(summary: str, method: str, path: str, expected: str) -> None:
    assert titles.title(summary, "", method, path, "x")[0] == expected


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("POST", "/v1/charges", "Create a charge"),  # not "Post charges charge"
        ("GET", "/v1/charges", "List charges"),
        ("GET", "/v1/charges/{charge}", "Get a charge"),
        ("POST", "/v1/charges/{charge}", "Update a charge"),
        ("DELETE", "/v1/customers/{customer}", "Delete a customer"),
        ("POST", "/v1/charges/{charge}/capture", "Capture a charge"),
        ("POST", "/v1/invoices/{invoice}/void", "Void an invoice"),
        ("GET", "/v1/charges/search", "Search charges"),
        ("POST", "/v1/charges/{charge}/refunds", "Create a refund of a charge"),  # a plural noun, not a verb
        ("GET", "/v1/customers/{customer}/sources", "List sources of a customer"),
        ("GET", "/v1/customers/{customer}/sources/{id}", "Get a source of a customer"),
        ("GET", "/v1/accounts/{account}/people", "List people of an account"),
        ("POST", "/v1/checkout/sessions", "Create a checkout session"),  # a namespace qualifies the resource
        ("GET", "/v1/balance", "Get balance"),
        ("GET", "/2010-04-01/Accounts/{AccountSid}/Calls/{Sid}.json", "Get a call of an account"),
        ("POST", "/admin.users.setOwner", "Set owner of admin users"),  # an RPC method name: its verb
        ("POST", "/v1/projects/{project}/keys/{key}:undelete", "Undelete a key of a project"),  # a custom method
        ("DELETE", "/tags#resourceArn&tagKeys", "Delete tags"),  # a fragment or query is no resource
    ],
)
def test_titles_from_method_and_path(method: str, path: str, expected: str) -> None:
    assert titles.title("", "", method, path, "x") == (expected, "path")


def test_title_sources_in_order() -> None:
    rpc = "/chat.postMessage"
    assert titles.title("", "Sends a message to a channel.", "POST", rpc, "x") == (
        "Send a message to a channel",
        "description",
    )
    assert titles.title("", "<p>Returns the list.</p>", "GET", "/v1/things", "x") == ("List things", "path")
    assert titles.title("", "", "GET", "/", "get_root") == ("Get root", "name")
    long = "Add a repository to the list of repositories allowed to use self-hosted runners in an organization"
    assert titles.title(long, "", "PUT", "/orgs/{org}/runners/repositories/{id}", "x") == (long, "summary")


# -- prose: HTML, links, cutting ---------------------------------------------------------------------------
def test_html_becomes_markdown() -> None:
    html = '<p>Creates a <code>Charge</code>. See <a href="/docs/charges">the guide</a>.</p><p>Second.</p>'
    assert prose.to_markdown(html) == "Creates a `Charge`. See [the guide](/docs/charges).\n\nSecond."
    assert prose.clean(html) == "Creates a `Charge`.\n\nSecond."  # a sentence that only points at docs goes
    assert prose.to_markdown("<ul><li>one</li><li>two</li></ul>") == "- one\n- two"
    assert prose.to_markdown("<details><summary>More</summary>hidden</details>").startswith("More\n\nhidden")


def test_markdown_with_inline_html_keeps_its_paragraphs_and_lists() -> None:
    text = "Intro with a_b and **bold**.\n\n- one\n  - nested <b>two</b>\n\nLast<br>line"
    assert prose.to_markdown(text) == "Intro with a_b and **bold**.\n\n- one\n  - nested **two**\n\nLast\nline"


@pytest.mark.parametrize("text", ["List<String> values", "a < b and c > d", "x <= 3", "plain `<tag>` text"])
def test_text_without_html_elements_is_unchanged(text: str) -> None:
    assert prose.to_markdown(text) == text


def test_links_keep_their_text_and_lose_their_urls() -> None:
    text = "If [issues are disabled](https://docs.example.com/a/b), the API returns `410`."
    assert prose.clean(text) == "If issues are disabled, the API returns `410`."
    see = 'Results per page (max 100). For more information, see "[Using pagination](https://x.example/p)."'
    assert prose.clean(see) == "Results per page (max 100)."
    assert prose.clean("The flow: ![a diagram](https://x.example/d.png) shows it.") == "The flow: a diagram shows it."
    assert prose.clean("see the `type` field") == "see the `type` field"  # no link: nothing to drop
    assert (
        prose.clean("when you [create or\nupdate a secret](https://x.example/s).")
        == "when you create or\nupdate a secret."
    )


@pytest.mark.parametrize(
    "text",
    [
        "Learn more about [it](https://x.example/a).  Then\tgo\t\ton. \n\n\n\nNext [x](y) \t\nend",
        "Read more [here](https://x.example/r). See [the docs](https://x.example/d) for more.",
        "[a](b)\n\n\n[c]: https://x.example/c\nlast  line  ",
        "No see-also here: [a](b) and a line with one space \nonly",
    ],
)
def test_unlink_runs_each_substitution_only_where_it_can_match(text: str) -> None:
    """prose.unlink skips the regexes whose text is absent; the result is what running all of them gives."""
    expected = prose.SEE_ALSO.sub("", text)
    expected = prose.REFERENCE_DEFINITION.sub("", prose.LINK.sub(r"\1", prose.IMAGE.sub(r"\1", expected)))
    for pattern, replacement in ((r"(?<=\S)[ \t]{2,}(?=\S)", " "), (r"[ \t]+\n", "\n"), (r"\n{3,}", "\n\n")):
        expected = re.sub(pattern, replacement, expected)
    assert prose.unlink(text) == expected.strip()


def test_cut_at_a_sentence_else_a_word_never_inside_a_link_or_code() -> None:
    text = "First sentence here. Second sentence is longer than the limit allows."
    assert prose.cut(text, 40) == "First sentence here."
    assert prose.cut(text, 200) == text
    assert prose.cut("One two three four five six seven", 20) == "One two three four…"
    linked = "See [a long link text](https://example.com/very/long/url) and more words after it"
    cut = prose.cut(linked, 30)
    assert cut == "See…" and "[" not in cut
    code = "Use `a very long code span` to do things well"
    assert prose.cut(code, 20) == "Use…"
    assert prose.cut("Use e.g. cards. Then more text follows here and here.", 30) == "Use e.g. cards."
    assert prose.cut("x" * 50, 10) == "x" * 50  # no word boundary at all: left whole rather than cut mid-word


# -- descriptions ------------------------------------------------------------------------------------------
def test_description_leaves_out_the_title_route_generic_errors_and_link_urls(tmp_path: Path) -> None:
    paths = {
        "/things/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "get": {
                "operationId": "getThing",
                "summary": "Get a thing",
                "description": "<p>Reads <b>one</b> thing, see <a href='https://x.example/t'>docs</a>.</p>",
                "responses": {
                    "200": {"description": "ok"},
                    "404": {"description": "Resource not found"},
                    "409": {"description": "The thing is locked by another writer"},
                    "410": {"description": "Gone if the thing was archived"},
                    "422": {"description": "Response when the thing is read-only"},
                    "default": {"description": "Unexpected error"},
                },
            },
        }
    }
    tool = tools_of(tmp_path, paths)[0]["get_thing"]
    assert tool.title == tool.annotations["title"] == "Get a thing"
    errors = "409 The thing is locked by another writer; 410 if the thing was archived; 422 when the thing is read-only"
    assert tool.description == f"Reads **one** thing, see docs.\n\nErrors: {errors}."


@pytest.mark.parametrize(
    ("summary", "description", "expected"),
    [
        ("Widget root", "Links to every widget.", "Links to every widget."),  # the summary is within the title
        ("Get widgets of a repo", "Gets the widgets of a repo. Only admins may.", "Only admins may."),
        ("Mark a widget as done", 'Marks a widget as "done." It stays so.', "It stays so."),  # ends after the quote
        ("List widgets for a repo", "Lists the widgets for a repo.\n\nNeeds `repo`.", "Needs `repo`."),
        ("Old - Get widgets", "Some text.", "Old - Get widgets\n\nSome text."),  # the summary says more: kept
        ("Get widgets of a repo", "Gets the widgets of a repo, newest first. Only admins may.", None),  # says more
        ("Get widgets of a repo", "Gets the widgets of a repo.\n\nOnly admins may.", "Only admins may."),
        ("Get widgets of a repo", "Gets the widgets of a repo.", "Gets the widgets of a repo."),  # never empty
    ],
)
def test_description_does_not_say_the_title_again(
    tmp_path: Path, summary: str, description: str, expected: str | None
) -> None:
    paths = {"/widgets": {"get": ok(operationId="getWidgets", summary=summary, description=description)}}
    tool = tools_of(tmp_path, paths)[0]["get_widgets"]
    assert tool.description == (description if expected is None else expected), tool.title


def test_description_is_never_empty_and_route_only_when_nothing_else_says_it(tmp_path: Path) -> None:
    paths = {
        "/a": {"get": ok(operationId="getA", summary="Get the a")},
        "/b/{id}": {"delete": ok(operationId="x1", parameters=[{"name": "id", "in": "path", "required": True}])},
        "/": {"get": ok(operationId="x2")},
    }
    tools = tools_of(tmp_path, paths)[0]
    assert tools["get_a"].description == "Get the a"
    assert tools["x1"].title == "Delete a b" and tools["x1"].description == "DELETE /b/{id}"
    assert tools["x2"].description == "GET /"


def test_constraints_and_schema_examples_stay_in_the_schema_only(tmp_path: Path) -> None:
    prop = {"type": "string", "maxLength": 5000, "example": "abc", "description": "A <em>code</em>."}
    body = {"content": {"application/json": {"schema": {"type": "object", "properties": {"code": prop}}}}}
    tool = tools_of(tmp_path, {"/c": {"post": ok(operationId="makeC", requestBody=body)}})[0]["make_c"]
    code = tool.input_schema["properties"]["code"]
    assert code == {"type": "string", "maxLength": 5000, "examples": ["abc"], "description": "A *code*."}
    assert "5000" not in tool.description and "abc" not in tool.description


# -- bodies and annotations --------------------------------------------------------------------------------
def test_an_empty_object_body_is_no_argument(tmp_path: Path) -> None:
    empty = {"type": "object", "properties": {}, "additionalProperties": False}
    form = {"content": {"application/x-www-form-urlencoded": {"schema": empty}}}
    anything = {"content": {"application/json": {"schema": {"type": "object"}}}}
    paths = {
        "/v1/charges": {
            "get": ok(operationId="GetCharges", requestBody=form),
            "post": ok(operationId="PostCharges", requestBody=anything),
        }
    }
    tools = tools_of(tmp_path, paths)[0]
    listing = tools["get_charges"]
    assert "body" not in listing.input_schema["properties"]
    assert listing.plan.body is not None and listing.plan.body.arg is None and not listing.plan.body.required
    assert tools["post_charges"].input_schema["properties"]["body"]["type"] == "object"  # a free-form body stays


def test_posts_that_delete_cancel_or_void_are_destructive(tmp_path: Path) -> None:
    paths = {
        "/invoices/{id}/void": {"post": ok(operationId="PostInvoicesInvoiceVoid")},
        "/runs/{id}/stop": {"post": ok(operationId="stopRun", summary="Cancel a workflow run")},
        "/keys/{id}/revocation": {"post": ok(operationId="revoke-key")},
        "/packages/{id}/restore": {"post": ok(operationId="restorePackage", summary="Restore a deleted package")},
        "/conflicts": {"post": ok(operationId="avoidConflicts")},
        "/items/{id}/remove": {
            "post": ok(operationId="removeItem", **{"x-mcp-annotations": {"destructiveHint": False}})
        },
        "/things": {"post": ok(operationId="createThing")},
    }
    tools = tools_of(tmp_path, paths)[0]
    hint = {name: tool.annotations["destructiveHint"] for name, tool in tools.items()}
    assert hint == {
        "post_invoices_invoice_void": True,
        "stop_run": True,
        "revoke_key": True,
        "restore_package": False,  # "deleted" describes the package, not the action
        "avoid_conflicts": False,  # a whole word only
        "remove_item": False,  # the spec's x-mcp-annotations win
        "create_thing": False,
    }
    config = Config(
        spec=str(write_spec(tmp_path, mini_spec(paths))),
        overrides=(Override("createThing", annotations=(("destructiveHint", True),)),),
    )
    assert {t.name: t.annotations["destructiveHint"] for t in analyze(config)[1]}["create_thing"] is True


@pytest.mark.parametrize("compact", [False, True])
def test_every_tool_lists_its_title_once_and_hints_that_differ_from_the_defaults(tmp_path: Path, compact: bool) -> None:
    paths = {"/things": {"get": ok(operationId="listThings"), "post": ok(operationId="makeThing")}}
    tools = tools_of(tmp_path, paths, compact=compact)[0]
    listed = {name: tool.to_json() for name, tool in tools.items()}
    # MCP: destructiveHint and idempotentHint mean something only when readOnlyHint is false
    assert listed["list_things"]["annotations"] == {"title": "List things", "readOnlyHint": True}
    assert listed["make_thing"]["annotations"] == {"title": "Create a thing", "destructiveHint": False}
    assert all("title" not in entry for entry in listed.values())  # the same title twice would be repetition
    assert tools["make_thing"].annotations["openWorldHint"] is True  # the tool itself keeps every hint
    assert tools["list_things"].annotations["destructiveHint"] is False  # ... and so does a read-only one
    assert {name: annotations.implied(entry["annotations"]) for name, entry in listed.items()} == {
        name: dict(tool.annotations) for name, tool in tools.items()
    }  # what a listing leaves out is what it implies: the surface report reads it back unchanged


def test_a_read_only_tool_lists_the_hints_reading_does_not_imply() -> None:
    odd = {"title": "Poll", "readOnlyHint": True, "destructiveHint": True, "idempotentHint": False}
    assert annotations.listed(odd) == odd  # overridden against what reading implies: said
    assert annotations.implied(annotations.listed(odd)) == {**odd, "openWorldHint": True}
    plain = {"title": "Get", "readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}
    closed = {"title": "Get", "readOnlyHint": True, "openWorldHint": False}
    assert annotations.listed({**plain, "openWorldHint": False}) == closed


# -- the listing's cost ------------------------------------------------------------------------------------
def test_count_tokens_is_cl100k_and_exact_on_long_text() -> None:
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0
    words = " ".join(f"word{i % 97} <|endoftext|> é{i}" for i in range(30_000))  # > one encoding chunk
    assert len(words) > 300_000
    pieces = words.split(" ")
    assert count_tokens(words) == count_tokens(" ".join(pieces[:1000])) + count_tokens(" " + " ".join(pieces[1000:]))


def test_output_schemas_leave_the_listing_only_when_it_is_too_large(tmp_path: Path) -> None:
    response = {
        "content": {"application/json": {"schema": {"type": "object", "properties": {"a": {"type": "string"}}}}}
    }
    paths: dict[str, Any] = {
        f"/things{i}": {"get": {"operationId": f"get{i}", "responses": {"200": response}}} for i in range(3)
    }
    body = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}
    paths["/things"] = {"post": {"operationId": "make", "requestBody": body, "responses": {"200": response}}}
    thing = {"type": "object", "properties": {"size": {"$ref": "#/components/schemas/Size"}}}
    size = {"type": "integer", "minimum": 1}
    spec = write_spec(tmp_path, mini_spec(paths, components={"schemas": {"Thing": thing, "Size": size}}))
    by_name = {t.name: t for t in analyze(Config(spec=str(spec)))[1]}
    tools = [by_name[name] for name in ("get0", "get1", "get2")]
    assert all(t.output_schema is not None for t in tools)
    kept, problems = fit_listing(tools)
    assert kept == tools and problems == []
    limit = listing_tokens(tools) - 1
    fitted, problems = fit_listing(tools, limit)
    assert all(t.output_schema is None for t in fitted) and listing_tokens(fitted) < limit
    assert [t.described_output for t in fitted] == [t.output_schema for t in tools]  # kept for describe_tool
    # Every constraint stays; only the result-shaping arguments' descriptions go (as under --compact).
    assert [without_prose(t.input_schema) for t in fitted] == [without_prose(t.input_schema) for t in tools]
    assert [t.input_schema["properties"]["fields"].get("description") for t in fitted] == [None] * 3
    assert [p.level for p in problems] == [Level.WARNING] and "output schemas are left out" in problems[0].message
    make = by_name["make"]  # a definition used once is written in place: the same schema without the $ref
    assert "$defs" in make.input_schema
    (inlined,), _ = fit_listing([make], listing_tokens([make]) - 1)
    assert "$defs" not in inlined.input_schema and inlined.input_schema == inline_refs(make.input_schema)[0]
    bare = replace(make, output_schema=None)  # --compact: inlined too, and nothing to warn about
    assert fit_listing([bare], listing_tokens([bare]) - 1) == (
        [replace(inlined, output_schema=None, described_output=None)],
        [],
    )


# -- GitHub: the whole `tools` surface within 350k tokens, with every schema fact kept -----------------------
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")


def without_prose(node: Any) -> Any:
    """A JSON Schema without its `description` texts: every keyword and value that constrains stays."""
    if isinstance(node, list):
        return [without_prose(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "description" and isinstance(value, str):
            continue
        if key in SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: without_prose(schema) for name, schema in value.items()}
        elif key in ("enum", "const", "default", "examples", "required"):
            out[key] = value
        else:
            out[key] = without_prose(value)
    return out


@pytest.mark.slow
def test_github_tools_surface_costs_at_most_350k_tokens_and_loses_no_schema_fact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = named_spec("github")
    _, tools, problems = analyze(Config(spec=spec))
    assert len(tools) > 1000
    tokens = listing_tokens(tools)  # tools.json exactly as generated
    assert any("output schemas are left out" in p.message for p in problems)
    assert all(t.description and t.annotations["title"] for t in tools)
    monkeypatch.setattr(prose, "clean_schema", lambda node: node)  # the schemas with the text changes disabled
    monkeypatch.setattr(listing_module, "inline_once", lambda node, *_: node)  # ... and with every $ref kept
    _, raw, _ = analyze(Config(spec=spec))
    assert [t.name for t in raw] == [t.name for t in tools]
    for new, old in zip(tools, raw):
        expanded = [without_prose(inline_refs(t.input_schema)[0]) for t in (new, old)]
        assert expanded[0] == expanded[1], new.name
        assert new.plan == old.plan
    assert tokens <= 350_000, f"GitHub's tools/list is {tokens:,} tokens"  # 340,195 when written


def test_counting_up_to_a_limit_stops_past_it_and_agrees_with_counting_all() -> None:
    """The listing with output schemas is counted only until it is over the limit: the count then exceeds the
    limit (so the decision is the one a whole count gives), and under the limit it is the whole count."""
    from codegen.surface.listing_text import ListingText

    entries = [
        {
            "name": f"tool_{n}",
            "description": f"Operation {n} of a large API, which returns the record it names. " * 3,
            "inputSchema": {"type": "object", "properties": {"id": {"type": "string", "description": f"id {n}"}}},
        }
        for n in range(6000)
    ]
    characters, whole, _ = ListingText().measure(entries, keep_text=False)
    assert characters > 1_500_000 and whole == count_tokens(
        listing_module.json.dumps(entries, sort_keys=True, separators=(",", ":"))
    )
    for limit in (1_000, whole // 3, whole - 1):
        stopped_at, tokens, text = ListingText().measure(entries, keep_text=False, stop_above=limit)
        assert tokens > limit and text is None
        assert stopped_at < characters or limit == whole - 1
    assert ListingText().measure(entries, keep_text=False, stop_above=whole) == (characters, whole, None)

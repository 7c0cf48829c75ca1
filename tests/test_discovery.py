"""The discovery surface's search at generation time: the search index (the same words and ranking in the
generator and in the generated search.py), the token budget of the discovery listing, and the tool-selection
benchmark (its operations exist; recall holds). Which surface `auto` picks, pins and the package's files:
test_discovery_surface.py."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from codegen.config import Config
from codegen.pipeline import analyze, generate
from codegen.surface.discovery import choose
from codegen.surface.search_analyzer import Analyzer
from codegen.surface.search_index import build_index
from codegen.surface.search_paths import resource
from codegen.surface.search_rank import MAX_MEANINGS, expand, id_nouns, rank
from codegen.surface import search_query
from codegen.surface.search_query import Value, value_kinds
from codegen.surface.tokens import listing_tokens
from codegen.surface.vocabulary import parse, sequences, synonyms
from codegen.surface.plans import ToolSpec

from conftest import PETSTORE, ROOT
from named_specs import named_specs

SELECTION = ROOT / "bench" / "selection"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
# recall@5 of bench/selection/evaluate.py when this test was written, less a little room; a change to the
# ranking that loses more than that fails here (the benchmark prints the figures: bench/results/selection.md)
# recall@5 the ranking keeps on the tasks it was tuned on and on each held-out set (bench/selection/heldout*)
RECALL_AT_5 = {"github": 0.90, "stripe": 0.93}
HELDOUT_RECALL_AT_5 = {
    "heldout": {"github": 0.75, "stripe": 0.80},
    "heldout2": {"github": 0.57, "stripe": 0.73},
    "heldout3": {"github": 0.75, "stripe": 0.81},
    "heldout4": {"github": 0.68, "stripe": 0.77},
    "heldout5": {"github": 0.72, "stripe": 0.74},
}
HELDOUT = [SELECTION / folder for folder in HELDOUT_RECALL_AT_5]


@pytest.fixture(scope="module")
def specs() -> dict[str, str]:
    found = named_specs()
    missing = [name for name in ("github", "stripe", "asana", "slack") if not Path(found.get(name, "")).is_file()]
    assert not missing, f"corpus missing {missing}: run tools/fetch-corpus"
    return found


@pytest.fixture(scope="module")
def mapped(specs: dict[str, str]) -> Iterator[dict[str, list[ToolSpec]]]:
    """GitHub's and Stripe's tools, mapped once for this module."""
    yield {name: analyze(Config(spec=specs[name], validate=False), fit=False)[1] for name in RECALL_AT_5}


def ranked(index: dict[str, Any], analyzer: Analyzer, text: str, limit: int) -> list[int]:
    """The generator's ranking of `text`, as the benchmark asks it."""
    return rank(index, analyzer.query(text), limit, analyzer.hints(text, index["intent"]))


def tasks(name: str, folder: Path = SELECTION) -> list[dict[str, Any]]:
    data = yaml.safe_load((folder / f"{name}.yaml").read_text(encoding="utf-8"))
    assert data["spec"] == name
    return list(data["tasks"])


# -- the benchmark ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["github", "stripe", "asana", "slack"])
def test_every_benchmark_operation_exists_in_its_spec(name: str, specs: dict[str, str]) -> None:
    document = json.loads(Path(specs[name]).read_text(encoding="utf-8"))
    operations = {
        f"{method.upper()} {path}" for path, item in document["paths"].items() for method in item if method in METHODS
    }
    found = tasks(name)
    assert len(found) >= {"github": 55, "stripe": 35}.get(name, 20)
    for folder in HELDOUT:
        if (folder / f"{name}.yaml").exists():
            heldout = tasks(name, folder)
            assert len(heldout) >= 20 and not {t["task"] for t in heldout} & {t["task"] for t in found}
            found += heldout
    assert len({t["task"] for t in found}) == len(found)  # no task twice
    missing = [op for t in found for op in t["operations"] if op not in operations]
    assert missing == []


def test_recall_at_5_holds(mapped: dict[str, list[ToolSpec]]) -> None:
    analyzer = Analyzer()
    for name, tools in mapped.items():
        index = build_index(tools)
        operations = [doc["operation"] for doc in index["tools"]]
        for folder, floor in ((SELECTION, RECALL_AT_5), *((SELECTION / f, r) for f, r in HELDOUT_RECALL_AT_5.items())):
            if not (folder / f"{name}.yaml").exists():
                continue
            found = tasks(name, folder)
            hits = sum(
                bool(set(t["operations"]) & {operations[i] for i in ranked(index, analyzer, t["task"], 5)})
                for t in found
            )
            assert hits / len(found) >= floor[name], (name, folder.name, hits, len(found))


def test_generated_search_ranks_a_big_api_as_the_generator(
    mapped: dict[str, list[ToolSpec]], discovery_package: dict[str, str], tmp_path: Path
) -> None:
    """The generated search.py over GitHub's index (thesaurus phrases included) gives the generator's ranking."""
    search = load_search(discovery_package, tmp_path)
    data = json.loads(json.dumps(build_index(mapped["github"])))  # as search.json carries it
    assert data["synonyms"]["phrases"]["bug"] == ["issu"]
    assert "authent" in data["synonyms"]["sequences"]["sign in"]  # a quoted phrase: "signed in", word for word
    index, analyzer = search.Index(data), Analyzer()
    heldout = [t for folder in HELDOUT if (folder / "github.yaml").exists() for t in tasks("github", folder)]
    extra = ["which account am I signed in with?", "what's in the repo?", "sign the commit in CI", "turn on pages"]
    for text in [t["task"] for t in tasks("github") + heldout] + VALUE_QUERIES + HINT_QUERIES + extra:
        found, _ = index.search(text, 8)
        assert index.hints(text) == analyzer.hints(text, data["intent"]), text
        assert [f["name"] for f in found] == [data["tools"][i]["name"] for i in ranked(data, analyzer, text, 8)]


def test_a_quoted_thesaurus_phrase_counts_only_word_for_word() -> None:
    """ "signed in" must not shrink to "sign" (and fire on "sign the commit"): a quoted phrase keeps its stop words."""
    analyzer = Analyzer()
    rules = parse('authenticated user <- my, "signed in"\nenable <- "turn on"\nmissing thing <- "x y"')
    terms = {"authent", "user", "enabl"}
    assert synonyms(terms, analyzer.stems, rules) == {"my": ["authent", "user"]}
    assert sequences(terms, analyzer.stems, analyzer.every, rules) == {
        "sign in": ["authent", "user"],
        "turn on": ["enabl"],
    }
    index = {"terms": {"authent": [[0], [100]], "sign": [[1], [100]]}, "synonyms": {"weight": 0.6, "phrases": {}}}
    index["synonyms"]["sequences"] = {"sign in": ["authent"]}
    for text, found in (("who am I signed in as?", True), ("sign the commit in CI", False)):
        expanded, reach = expand(index, analyzer.query(text), analyzer.hints(text).sequence)
        assert ("authent" in expanded) is found and ("authent" in reach.get("sign", ())) is found, text


def test_the_intent_and_values_of_a_request_rank_the_tool_that_does_it(mapped: dict[str, list[ToolSpec]]) -> None:
    """A request that changes something prefers tools that change; a value names what the path takes."""
    analyzer = Analyzer()
    assert (
        analyzer.hints("which teams are there?").intent == analyzer.hints("can you show me the teams").intent == "read"
    )
    assert analyzer.hints("please merge the PR").intent == analyzer.hints("open a pull request").intent == "write"
    assert analyzer.hints("the T-shirt should cost 15 euros").intent is None
    assert analyzer.hints("I'd like to see the logs").intent == analyzer.hints("give me the logs").intent == "read"
    assert analyzer.hints("how do I add a member?").intent == analyzer.hints("can I delete it?").intent == "write"
    # "get notified when...": a passive is no read, its participle is the verb; "get closed issues" reads
    assert analyzer.hints("get notified when an issue is created").intent is None
    assert analyzer.hints("get notified when an issue is created").actions == {"notifi"}
    assert analyzer.hints("get closed issues").intent == "read"
    assert analyzer.hints("merge pull request #17 now").values == (Value(("request", "pull"), ""),)
    assert analyzer.hints("list subscriptions of cus_9's").values == (Value((), "cus"),)
    assert analyzer.hints("on issue 42, in 2 days").values == (Value(("issu",), ""),)  # "in" ends what names 2
    assert "platform" not in analyzer.query("start a team called platform")
    assert "todo" in analyzer.query("add a to-do") and "featurelogin" not in analyzer.query("merge feature-login")
    stripe, github = build_index(mapped["stripe"]), build_index(mapped["github"])
    meanings = {prefix: id_nouns(stripe, prefix) for prefix in ("cus", "acct", "pi", "dp", "in")}
    assert meanings == {
        "cus": ["custom"],
        "acct": ["account"],
        "pi": ["payment", "intent"],  # initials
        "dp": ["disput"],
        "in": [],  # invoice, intent, ...: too many meanings
    }
    # a phrase that names something is no request to change it: a first word changes when an object follows it
    for index, text, expected in (
        (github, "repository secrets", None),
        (github, "status of deployment 7", None),
        (github, "invite dave@example.com to the org", "write"),
        (github, "star torvalds/linux", "write"),
        (stripe, "charge the customer 20 dollars", "write"),
        (stripe, "customer subscriptions", None),
        (github, "merge PR 17", "write"),  # the API's summaries start with merge: a verb
        (github, "can you merge PR 17?", "write"),
    ):
        assert analyzer.hints(text, index["intent"]).intent == expected, text
    for index, text, operation in (
        (stripe, "change the email address we have on file for cus_123", "POST /v1/customers/{customer}"),
        (stripe, "give up on dispute dp_9, we won't fight it", "POST /v1/disputes/{dispute}/close"),
        (github, "leave a comment on issue 42", "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"),
        (github, "merge pull request 17 into main", "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge"),
    ):
        operations = [index["tools"][i]["operation"] for i in ranked(index, analyzer, text, 5)]
        assert operation in operations[:2], (text, operations)
    # without the hints the merge's GET (is it merged?) comes second, the customer is not found
    plain = [
        github["tools"][i]["operation"] for i in rank(github, analyzer.query("merge pull request 17 into main"), 3)
    ]
    assert "GET /repos/{owner}/{repo}/pulls/{pull_number}/merge" in plain


# -- the listing's cost ----------------------------------------------------------------------------
def test_discovery_listing_is_small_for_big_apis(mapped: dict[str, list[ToolSpec]]) -> None:
    for name, tools in mapped.items():
        surface, problems = choose(tools, "auto", (), name)
        assert surface.name == "discovery" and surface.listed == 4 and problems == []
        assert surface.tokens == listing_tokens(list(surface.meta)) <= 2000
        # every group named in search_tools' description or counted in its "and N more"
        description = surface.meta[0]["description"]
        assert "Groups, for `tag`" in description


# -- the generated search.py -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def discovery_package(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    result = generate(Config(spec=str(PETSTORE), output=Path("petd"), surface="discovery", pin=("get_pet_by_id",)))
    assert result.surface.name == "discovery" and result.surface.pinned == ("get_pet_by_id",)
    return dict(result.files)


def load_search(files: dict[str, str], tmp_path: Path) -> ModuleType:
    """The generated search.py, imported from a package of its own (with query.py and datafiles.py, which it
    imports)."""
    folder = tmp_path / "petd_search"
    folder.mkdir(exist_ok=True)
    (folder / "__init__.py").write_text("", encoding="utf-8")
    for name in ("search.py", "query.py", "datafiles.py"):
        (folder / name).write_text(files[f"src/petd/{name}"], encoding="utf-8")
    modules = {
        "petd_search": "__init__.py",
        "petd_search.query": "query.py",
        "petd_search.datafiles": "datafiles.py",
        "petd_search.search": "search.py",
    }
    for name, file in modules.items():
        spec = importlib.util.spec_from_file_location(name, folder / file)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules["petd_search.search"]


VALUE_QUERIES = [
    "invite dave@example.com to the org",
    "notify https://example.com/hook, whenever someone pushes",
    "show me src/app.py and README.md",
    "open (config.yml), then docs/index.html.",
    "see example.com or chat.postMessage, v1.2 and e.g. 3.14",
    "call users.info, conversations.list and pins.add",
]


HINT_QUERIES = [
    "can you please show me order 42?",
    "delete pet #7, it was sold",
    "the T-shirt should cost 15 euros",
    'add a to-do called "buy food" for pet pe_12 and order or_9\'s shipment',
    "Let's update user us_1 and ca_2 x_3 now",
    "which pets are available",
    "how do I add a pet?",
    "I'd like to see the orders",
    "give me the pets, then tell us",
    "can I delete order 5?",
    "store inventory",
    "pet photos, user login",
    "order 5 status",
    "pet the dog",
    "get notified at our endpoint whenever an order is created",
    "get sold pets",
    "show me PET-12, not UTF-8",
    "who am I logged in as?",
    "what's in the store?",
    "",
]


def test_values_add_their_kind_and_resources_name_what_a_path_acts_on() -> None:
    assert value_kinds(VALUE_QUERIES[0]) == ["email"]
    assert value_kinds(VALUE_QUERIES[1]) == ["url"]
    assert value_kinds(VALUE_QUERIES[2]) == ["file", "file"]
    assert value_kinds(VALUE_QUERIES[3]) == ["file", "file"]
    # a host is a URL; a method name, a version, "e.g." and a number are no values
    assert value_kinds(VALUE_QUERIES[4]) == ["url"]
    assert value_kinds(VALUE_QUERIES[5]) == []
    assert value_kinds("x@y.z " * 50) == ["email"] * 20  # bounded
    # a tracker's key is a ticket, and its letters are no words to look for; a standard's name and number is neither
    assert value_kinds("show me PROJ-123, then ABC-7 in UTF-8") == ["ticket", "ticket"]
    assert Analyzer().query("show me PROJ-123 in UTF-8") == ["show", "utf", "ticket"]
    assert Analyzer().query("open src/app.py") == ["open", "src", "app", "py", "file"]
    assert resource("/repos/{owner}/{repo}") == "repos"
    assert resource("/repos/{owner}/{repo}/issues/{issue_number}/comments") == "issues comments"
    assert resource("/repos/{owner}/{repo}/issues/comments/{comment_id}") == "comments"
    assert resource("/v1/invoices/{invoice}/send") == "invoices send"
    assert resource("/chat.postMessage") == "chat.postMessage"
    assert resource("/v1") == resource("/") == resource("/{id}") == ""


def test_generated_search_stems_and_ranks_as_the_generator(discovery_package: dict[str, str], tmp_path: Path) -> None:
    search = load_search(discovery_package, tmp_path)
    data = json.loads(discovery_package["src/petd/search.json"])
    index = search.Index(data)
    analyzer = Analyzer()
    for text in ("Who starred my repositories?", "listPetsByStatus", "créer une facture", "pull_requests <b>x</b>"):
        assert index.stems(text) == analyzer.stems(text), text
    for text in VALUE_QUERIES + HINT_QUERIES:
        assert index.query(text) == analyzer.query(text), text
        assert index.hints(text) == analyzer.hints(text, data["intent"]), text
    said = sys.modules["petd_search.query"]  # the query's words, beside search.py
    for name in ("EMAIL", "URL", "FILE", "EXTENSIONS", "DOMAINS", "PUNCTUATION", "MAX_VALUES"):
        assert getattr(said, name) == getattr(search_query, name), name
    for name in ("NAMED", "HYPHENATED", "NUMBER", "ID", "MAX_BEFORE", "VALUE_LIKE", "KEY", "KEY_WORD"):
        assert getattr(said, name) == getattr(search_query, name), name
    assert search._MAX_MEANINGS == MAX_MEANINGS
    for prefix in ("pe", "or", "us", "ca", "x", ""):
        assert index.id_nouns(prefix) == id_nouns(data, prefix), prefix
    for query in ("find a pet by its id", "delete the order", "log the user out", "upload an image", *HINT_QUERIES):
        found, total = index.search(query, 8)
        expected = ranked(data, analyzer, query, 8)
        assert [t["name"] for t in found] == [data["tools"][i]["name"] for i in expected]
        assert total >= len(found)
    uploads, _ = index.search("upload an image of my pet", 1)
    assert uploads[0]["name"] == "upload_file"

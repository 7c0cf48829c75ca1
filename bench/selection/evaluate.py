"""Tool-selection benchmark: does search find the operation a user's request needs?

For each spec with a task file here (github.yaml, stripe.yaml, ...), map the spec to tools exactly as
the generator does, build the discovery search index, and rank the tools for each task's words. A task
counts as found at k when one of its operations is among the first k results. Prints recall@1 and
recall@5 per spec for our ranking, for a baseline: plain BM25 (bm25s, its default English tokenizer, no
stemming) over each tool's one-line summary, and for FastMCP's own search_tools when its venv is set up.

    .venv/bin/python bench/selection/evaluate.py [--spec github ...] [--json bench/results/selection.json]

`--summaries N` also asks, for N sampled tools of each spec, the tool's own one-line summary and prints how
often that tool (or one with the same summary) comes first: the ranking's precision on the API's own words,
which a thesaurus line that is too broad lowers. `--tuning-only` leaves the held-out tasks out.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bm25s
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from codegen.config import Config  # noqa: E402
from codegen.pipeline import analyze  # noqa: E402
from codegen.surface.search_analyzer import Analyzer  # noqa: E402
from codegen.surface.search_index import build_index, short_summary  # noqa: E402
from codegen.surface.search_rank import rank  # noqa: E402
from codegen.surface.plans import ToolSpec  # noqa: E402
from named_specs import named_specs as spec_paths  # noqa: E402  (tools/named_specs.py)

HERE = Path(__file__).resolve().parent
# tasks written after tuning and never used for it, oldest first: (label, folder)
HELDOUT = (
    ("held out", HERE / "heldout"),
    ("held out 2", HERE / "heldout2"),
    ("held out 3", HERE / "heldout3"),
    ("held out 4", HERE / "heldout4"),
    ("held out 5", HERE / "heldout5"),
)
TOOLS_DIR = Path(os.environ.get("MCP_CODEGEN_TOOLS", Path.home() / ".cache" / "mcp-codegen-tools"))
FASTMCP_PYTHON = TOOLS_DIR / "fastmcp-venv" / "bin" / "python"
FASTMCP_CACHE = TOOLS_DIR / "fastmcp-search-cache"
FASTMCP_SECONDS = 2400  # FastMCP searches GitHub's 1,223 tools slowly: ~5 s a task on a busy 2-core machine
SPECS = ("github", "stripe", "asana", "slack")
# further tuning tasks for APIs the ranking was not first tuned on (bench/selection/tuning-extra/), with --extra
EXTRA = HERE / "tuning-extra"
EXTRA_SPECS = ("twilio", "jira")


@dataclass(frozen=True)
class Task:
    text: str
    operations: frozenset[str]


def load_tasks(name: str, folder: Path = HERE) -> list[Task]:
    data = yaml.safe_load((folder / f"{name}.yaml").read_text(encoding="utf-8"))
    return [Task(str(t["task"]), frozenset(t["operations"])) for t in data["tasks"]]


def spec_tools(path: str) -> list[ToolSpec]:
    _, tools, _ = analyze(Config(spec=path, validate=False), fit=False)  # as the index reads them
    return tools


def recall(ranked: list[list[str]], tasks: list[Task], k: int) -> float:
    hits = sum(1 for found, task in zip(ranked, tasks) if task.operations.intersection(found[:k]))
    return hits / len(tasks)


def ours(tools: list[ToolSpec], tasks: list[Task], index: dict[str, Any] | None = None) -> list[list[str]]:
    index = index or build_index(tools)
    analyzer = Analyzer()
    operations = [doc["operation"] for doc in index["tools"]]
    return [
        [operations[i] for i in rank(index, analyzer.query(task.text), 5, analyzer.hints(task.text, index["intent"]))]
        for task in tasks
    ]


def baseline(tools: list[ToolSpec], tasks: list[Task]) -> list[list[str]]:
    corpus = [short_summary(tool, None) for tool in tools]
    model = bm25s.BM25()
    model.index(bm25s.tokenize(corpus, show_progress=False), show_progress=False)
    operations = [f"{tool.operation.method} {tool.operation.path}" for tool in tools]
    out = []
    for task in tasks:
        query = bm25s.tokenize([task.text], show_progress=False)
        docs, scores = model.retrieve(query, k=5, show_progress=False)
        out.append([operations[int(d)] for d, s in zip(docs[0], scores[0]) if s > 0])
    return out


def fastmcp(path: str, sets: dict[str, list[Task]]) -> dict[str, list[list[str]]] | None:
    """FastMCP's own search_tools (its BM25SearchTransform over the tools FastMCP.from_openapi makes), asked each
    task in its venv (fastmcp_search.py); None when that venv is not set up (bench/peers/setup-fastmcp.sh)."""
    if not FASTMCP_PYTHON.is_file():
        return None
    request = {"spec": path, "tasks": {name: [t.text for t in tasks] for name, tasks in sets.items()}}
    # FastMCP's answers depend only on its version, the spec and the task texts: kept by their hash, so that a
    # change to our ranking is measured again in seconds (GitHub's FastMCP column takes ~10 minutes)
    spec_bytes = Path(path).read_bytes()
    key = hashlib.sha256(
        json.dumps([str(FASTMCP_PYTHON.resolve()), request["tasks"]], sort_keys=True).encode() + spec_bytes
    ).hexdigest()
    cached = FASTMCP_CACHE / f"{key}.json"
    if cached.is_file():
        return dict(json.loads(cached.read_text(encoding="utf-8")))
    try:
        done = subprocess.run(
            [str(FASTMCP_PYTHON), str(HERE / "fastmcp_search.py")],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=FASTMCP_SECONDS,
        )
    except subprocess.TimeoutExpired:
        print(
            f"FastMCP search gave no answer on {path} within {FASTMCP_SECONDS} s: its column is left out",
            file=sys.stderr,
        )
        return None
    if done.returncode != 0:
        print(f"FastMCP search failed on {path}: {done.stderr[-500:]}", file=sys.stderr)
        return None
    found = dict(json.loads(done.stdout)["found"])
    FASTMCP_CACHE.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(found), encoding="utf-8")
    return found


def summaries_first(tools: list[ToolSpec], index: dict[str, Any], sample: int, seed: int = 1) -> float:
    """Share of `sample` tools (a fixed random sample) ranked first when the query is their own summary."""
    analyzer = Analyzer()
    summaries = [short_summary(tool, None) for tool in tools]
    picks = list(range(len(tools)))
    random.Random(seed).shuffle(picks)
    picks = picks[:sample]
    hits = 0
    for i in picks:
        top = rank(index, analyzer.query(summaries[i]), 1, analyzer.hints(summaries[i], index["intent"]))
        hits += bool(top) and summaries[top[0]] == summaries[i]
    return hits / len(picks) if picks else 0.0


def evaluate(
    name: str, path: str, peer: bool = True, heldout: bool = True, summaries: int = 0, folder: Path = HERE
) -> list[dict[str, Any]]:
    """The tuning tasks' result (`folder`/NAME.yaml), and each held-out set's (heldout*/NAME.yaml) where there is one."""
    started = time.perf_counter()
    tools = spec_tools(path)
    index = build_index(tools)
    built = time.perf_counter() - started
    sets = {name: load_tasks(name, folder)}
    for label, folder in HELDOUT if heldout else ():
        if (folder / f"{name}.yaml").exists():
            sets[f"{name} ({label})"] = load_tasks(name, folder)
    # FastMCP is asked one set at a time: each set's answers are kept on their own, and a slow set loses only its column
    peers = {label: fastmcp(path, {label: tasks}) if peer else None for label, tasks in sets.items()}
    results = [
        score(label, tasks, tools, index, built, (peers[label] or {}).get(label)) for label, tasks in sets.items()
    ]
    if summaries > 0:
        results[0]["summary_as_query@1"] = round(summaries_first(tools, index, summaries), 3)
    return results


def score(
    name: str,
    tasks: list[Task],
    tools: list[ToolSpec],
    index: dict[str, Any],
    built: float,
    peer: list[list[str]] | None = None,
) -> dict[str, Any]:
    result: dict[str, Any] = {"spec": name, "tools": len(tools), "tasks": len(tasks), "seconds": round(built, 1)}
    rankings = [("ours", ours(tools, tasks, index)), ("bm25_summary", baseline(tools, tasks))]
    if peer is not None:
        rankings.append(("fastmcp_bm25", peer))
    for label, ranked in rankings:
        result[label] = {"recall@1": round(recall(ranked, tasks, 1), 3), "recall@5": round(recall(ranked, tasks, 5), 3)}
        if label == "ours" and not is_held_out(name):  # a held-out miss read is a task seen
            result["misses@5"] = [t.text for found, t in zip(ranked, tasks) if not t.operations.intersection(found)]
    return result


def is_held_out(label: str) -> bool:
    return "(held out" in label


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--spec", action="append", choices=SPECS + EXTRA_SPECS, help="default: every spec with a task file"
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--markdown", type=Path, help="also write the table, with the misses, as Markdown here")
    parser.add_argument("--misses", action="store_true", help="print the tasks our ranking misses at 5")
    parser.add_argument("--no-fastmcp", action="store_true", help="skip FastMCP's search even when its venv is there")
    parser.add_argument("--tuning-only", action="store_true", help="leave the held-out tasks out")
    parser.add_argument(
        "--extra", action="store_true", help=f"also the extra tuning tasks of {', '.join(EXTRA_SPECS)} (tuning-extra/)"
    )
    parser.add_argument(
        "--summaries", type=int, default=0, metavar="N", help="also rank N sampled tools' own summaries (recall@1)"
    )
    parser.add_argument(
        "--readmes",
        action="store_true",
        help="also rewrite the table in bench/README.md and the sentence in README.md (between their markers)",
    )
    args = parser.parse_args(argv)
    paths = spec_paths()
    names = args.spec or [*SPECS, *(EXTRA_SPECS if args.extra else ())]
    results = [
        result
        for name in names
        for result in evaluate(
            name,
            paths[name],
            peer=not args.no_fastmcp,
            heldout=not args.tuning_only,
            summaries=args.summaries,
            folder=EXTRA if name in EXTRA_SPECS else HERE,
        )
    ]
    print(
        f"{'spec':19} {'tools':>5} {'tasks':>5}  {'ours r@1':>8} {'ours r@5':>8}  {'bm25 r@1':>8} {'bm25 r@5':>8}"
        f"  {'FastMCP r@1':>11} {'FastMCP r@5':>11}"
    )
    for r in results:
        o, b = r["ours"], r["bm25_summary"]
        f = r.get("fastmcp_bm25")
        peer = f"  {f['recall@1']:11.1%} {f['recall@5']:11.1%}" if f else f"  {'-':>11} {'-':>11}"
        print(
            f"{r['spec']:19} {r['tools']:5} {r['tasks']:5}  {o['recall@1']:8.1%} {o['recall@5']:8.1%}"
            f"  {b['recall@1']:8.1%} {b['recall@5']:8.1%}{peer}"
        )
        if "summary_as_query@1" in r:
            print(f"    own summary as the query, recall@1: {r['summary_as_query@1']:.1%}")
        if args.misses:
            for text in r.get("misses@5", []):
                print(f"    miss: {text}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(markdown(results), encoding="utf-8")
    if args.readmes:
        rewrite(ROOT / "bench" / "README.md", "selection:table", "\n".join(table(results)))
        if headline(results):
            rewrite(ROOT / "README.md", "selection:summary", headline(results))
    return 0


def table(results: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| spec | tools | tasks | ours recall@1 | ours recall@5 | baseline recall@1 | baseline recall@5 "
        "| FastMCP recall@1 | FastMCP recall@5 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        o, b, f = r["ours"], r["bm25_summary"], r.get("fastmcp_bm25")
        peer = f"{f['recall@1']:.1%} | {f['recall@5']:.1%}" if f else "– | –"
        lines.append(
            f"| {r['spec']} | {r['tools']:,} | {r['tasks']} | {o['recall@1']:.1%} | {o['recall@5']:.1%} "
            f"| {b['recall@1']:.1%} | {b['recall@5']:.1%} | {peer} |"
        )
    return lines


def headline(results: list[dict[str, Any]]) -> str:
    """The project README's sentence: the newest held-out set's recall@5 of ours, FastMCP's and the baseline."""
    held = {r["spec"].split(" ")[0]: r for r in results if is_held_out(r["spec"])}  # the newest set comes last
    if not {"github", "stripe"} <= held.keys():
        return ""
    g, s = held["github"], held["stripe"]
    peer = ""
    if g.get("fastmcp_bm25") and s.get("fastmcp_bm25"):
        peer = (
            f"{g['fastmcp_bm25']['recall@5']:.0%} and {s['fastmcp_bm25']['recall@5']:.0%} for FastMCP's own BM25 "
            "tool search on the same tasks and "
        )
    return (
        f"it finds the right operation in the first 5 results for {g['ours']['recall@5']:.0%} of GitHub's and "
        f"{s['ours']['recall@5']:.0%} of Stripe's tasks, against {peer}{g['bm25_summary']['recall@5']:.0%} and "
        f"{s['bm25_summary']['recall@5']:.0%} for plain BM25 over the summaries."
    )


def rewrite(path: Path, name: str, text: str) -> None:
    """Replace what stands between `<!-- NAME:start -->` and `<!-- NAME:end -->` in `path` with `text`."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    old = path.read_text(encoding="utf-8")
    if start not in old or end not in old:
        raise SystemExit(f"{path}: no {start} ... {end} markers")
    head, rest = old.split(start, 1)
    path.write_text(head + start + "\n" + text.rstrip("\n") + "\n" + end + rest.split(end, 1)[1], encoding="utf-8")


def markdown(results: list[dict[str, Any]]) -> str:
    lines = [
        "# Tool selection: recall of the discovery search",
        "",
        "`.venv/bin/python bench/selection/evaluate.py --json bench/results/selection.json "
        "--markdown bench/results/selection.md`",
        "",
        "A task is found at k when one of its operations is among the first k results. Baseline: plain BM25",
        "(bm25s, default English tokenizer, no stemming) over each tool's one-line summary. FastMCP: its own",
        "`search_tools` (BM25SearchTransform, its default 5 results) over the tools `FastMCP.from_openapi` makes",
        "from the same spec, asked through its client (bench/selection/fastmcp_search.py). Held-out rows: tasks",
        "written before the last tuning and never used for it (bench/selection/heldout*/); their misses are not listed.",
        "",
        *table(results),
    ]
    lines += ["", "Tasks our ranking misses at 5:", ""]
    for r in results:
        if "misses@5" in r:
            lines += [f"- {r['spec']}: " + "; ".join(f"“{text}”" for text in r["misses@5"])]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())

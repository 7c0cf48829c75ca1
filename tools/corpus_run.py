"""Corpus runner: generate a server for every selected OpenAPI document, start it, list its tools, check them.

    tools/corpus-run --set directory --sample 50 --seed 1 --jobs 2
    tools/corpus-run --validate off --shuffle full --jsonl corpus.jsonl --json corpus.json   # the whole corpus
    tools/corpus-run path/to/spec.json other.yaml              # explicit documents
    tools/corpus-run --calls --max-ops 30 --sample 30 --seed calls   # call tools against a Prism mock (--calls)
    tools/corpus-run --own-tests --set examples               # also run each package's own per-tool tests

For each spec, in a worker process: codegen.pipeline.generate (in-process) + codegen.emit.write.write into a temporary
folder; then the generated server runs as a subprocess over stdio (this Python, PYTHONPATH=<out>/src,
`-m <package>`), and the official MCP client lists its tools (all pages). Checks: no exception in the generator, no
traceback on the server's stderr, the generated package's dependencies installed in this Python (the server runs
from its source tree, not pip-installed, to be fast), every tool name valid (^[a-zA-Z0-9_-]{1,64}$) and unique, every
inputSchema and outputSchema a valid JSON Schema 2020-12 (metaschema check) whose local $refs resolve, inputSchema
and outputSchema rooted at `type: object`, `required` names present in `properties`, and the listed tools equal to
tools.json.

Outcome per spec: ok, ok-with-warnings, spec-error (the document's own fault: not OpenAPI, unreadable, no
operations), FAIL(category). The exit status is 1 when any spec FAILs, else 0.

Parts: corpus_one.py (one spec, in a worker), corpus_checks.py (the checks of the listed tools); this module selects
the specs, runs the workers and reports.

Selection uses the project's tools/list-specs (same --set/--max-ops/--min-ops/--sample/--seed options).
Every spec runs under a per-spec timeout in a worker that is killed (with its server) when it runs over, and
--time-limit bounds the whole run: specs not started by then are reported as not-run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import multiprocessing.connection
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from corpus_one import BIG_BYTES, FAIL, NOT_RUN, OK, SPEC_ERROR, WARN, Outcome, run_one  # noqa: F401 (re-exported)
from named_specs import named_specs  # tools/named_specs.py

REPO = Path(__file__).resolve().parents[1]
LIST_SPECS = REPO / "tools" / "list-specs"
RECYCLE_BYTES = 5_000_000  # a worker that handled a spec this big is replaced (bounds memory)


# -- selection ------------------------------------------------------------------------------------------------
def select(args: argparse.Namespace) -> list[str]:
    if args.specs:
        return [str(Path(s).resolve()) for s in args.specs]
    if args.named:
        found = named_specs()
        if not found:
            raise SystemExit("corpus-run: no corpus: run tools/fetch-corpus")
        return [path for name, path in found.items() if "all" in args.named or name in args.named]
    cmd = [sys.executable, str(LIST_SPECS), "--set", args.set]
    for flag in ("max_ops", "min_ops", "version"):
        value = getattr(args, flag)
        if value is not None:
            cmd += ["--" + flag.replace("_", "-"), str(value)]
    if args.sample is not None:
        cmd += ["--sample", str(args.sample), "--seed", str(args.seed)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=300).stdout
    return [line for line in out.splitlines() if line.strip()]


def short(path: str) -> str:
    marker = "node_modules/"
    return path.split(marker, 1)[1] if marker in path else path


# -- worker pool ----------------------------------------------------------------------------------------------
def _worker(conn: multiprocessing.connection.Connection, options: dict[str, Any]) -> None:
    os.setsid()  # its own process group: a timeout kills the worker and the server it started
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "tools"))
    while True:
        try:
            spec = conn.recv()
        except EOFError:
            return
        if spec is None:
            return
        conn.send(asdict(run_one(spec, options)))


@dataclass
class _Slot:
    process: Any
    conn: multiprocessing.connection.Connection
    spec: str | None = None
    deadline: float = 0.0
    done: int = 0


def run_all(
    specs: Sequence[str],
    options: dict[str, Any],
    jobs: int,
    timeout: float,
    time_limit: float,
    progress: bool = True,
    jsonl: Path | None = None,
) -> list[Outcome]:
    """Run every spec in `jobs` worker processes; per-spec `timeout`; no new spec starts after `time_limit` s.

    `jsonl`: each outcome is appended to this file as it arrives, and specs already recorded there are not run
    again (resume an interrupted run with the same command)."""
    context = multiprocessing.get_context("spawn")
    results: dict[str, Outcome] = {}
    if jsonl is not None and jsonl.exists():
        for line in jsonl.read_text(encoding="utf-8").splitlines():
            if line.strip():
                done = Outcome(**json.loads(line))
                if done.spec in specs:
                    results[done.spec] = done
    pending = [s for s in specs if s not in results]
    if progress and results:
        print(f"corpus-run: {len(results)} specs already in {jsonl}, {len(pending)} to run", file=sys.stderr)
    slots: list[_Slot] = []
    stop_at = time.monotonic() + time_limit

    def spawn() -> _Slot:
        parent, child = context.Pipe()
        process = context.Process(target=_worker, args=(child, options), daemon=True)
        process.start()
        child.close()
        return _Slot(process, parent)

    def kill(slot: _Slot) -> None:
        groups = {slot.process.pid}
        try:  # Prism (--calls) runs in a session of its own: find it among the worker's descendants
            import psutil

            groups |= {os.getpgid(c.pid) for c in psutil.Process(slot.process.pid).children(recursive=True)}
        except Exception:
            pass
        for group in groups:
            try:
                os.killpg(group, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        slot.process.join(10)
        slot.conn.close()

    def report(outcome: Outcome) -> None:
        results[outcome.spec] = outcome
        if jsonl is not None:
            with jsonl.open("a", encoding="utf-8") as stream:
                stream.write(json.dumps(asdict(outcome)) + "\n")
        if progress:
            n = len(results)
            extra = (
                f" {outcome.detail.splitlines()[0][:160]}"
                if outcome.outcome in (FAIL, SPEC_ERROR) and outcome.detail
                else ""
            )
            print(
                f"[{n}/{len(specs)}] {outcome.label:<28} {outcome.tools:>5} tools {outcome.seconds.get('total', 0):>6.1f}s "
                f"{short(outcome.spec)}{extra}",
                file=sys.stderr,
                flush=True,
            )

    def terminate(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt  # so the finally below stops the workers and their servers

    previous = signal.signal(signal.SIGTERM, terminate)
    slots = [spawn() for _ in range(max(1, min(jobs, len(pending))))] if pending else []
    try:
        while pending or any(s.spec for s in slots):
            for index, slot in enumerate(slots):
                if slot.spec is None and pending and time.monotonic() < stop_at:
                    slot.spec = pending.pop(0)
                    slot.deadline = time.monotonic() + timeout
                    slot.conn.send(slot.spec)
            busy = [s for s in slots if s.spec]
            if not busy:
                break
            wait = max(0.05, min(s.deadline for s in busy) - time.monotonic())
            ready = multiprocessing.connection.wait([s.conn for s in busy] + [s.process.sentinel for s in busy], wait)
            for index, slot in enumerate(slots):
                if slot.spec is None:
                    continue
                spec = slot.spec
                if slot.conn in ready:
                    try:
                        data = slot.conn.recv()
                    except (EOFError, OSError):
                        data = asdict(Outcome(spec, FAIL, "worker-died", f"exit code {slot.process.exitcode}"))
                    report(Outcome(**data))
                elif slot.process.sentinel in ready or not slot.process.is_alive():
                    report(Outcome(spec, FAIL, "worker-died", f"exit code {slot.process.exitcode} (out of memory?)"))
                elif time.monotonic() >= slot.deadline:
                    report(
                        Outcome(spec, FAIL, "timeout", f"no result within {timeout:g} s", seconds={"total": timeout})
                    )
                else:
                    continue
                slot.spec = None
                slot.done += 1
                recycle = not slot.process.is_alive() or results[spec].category in ("timeout", "worker-died")
                try:
                    recycle = recycle or os.path.getsize(spec) > RECYCLE_BYTES or slot.done >= 200
                except OSError:
                    pass
                if recycle:
                    kill(slot)
                    slots[index] = spawn()
    finally:
        for slot in slots:
            try:
                slot.conn.send(None)
            except (OSError, ValueError):
                pass
            kill(slot)
        signal.signal(signal.SIGTERM, previous)
    for spec in specs:
        results.setdefault(spec, Outcome(spec, NOT_RUN, detail="--time-limit reached before it started"))
    return [results[s] for s in specs]


# -- report ---------------------------------------------------------------------------------------------------
def summary(results: Sequence[Outcome]) -> str:
    lines = [f"{len(results)} specs"]
    by_outcome = Counter(r.outcome for r in results)
    lines.append("")
    lines.append("| outcome | specs |")
    lines.append("|---|---|")
    for name in (OK, WARN, SPEC_ERROR, FAIL, NOT_RUN):
        if by_outcome.get(name):
            lines.append(f"| {name} | {by_outcome[name]} |")
    for title, outcome in (("failures", FAIL), ("spec errors", SPEC_ERROR)):
        rows = [r for r in results if r.outcome == outcome]
        if not rows:
            continue
        lines += ["", f"| {title}: category | specs | example |", "|---|---|---|"]
        for category, count in sorted(Counter(r.category for r in rows).items(), key=lambda kv: (-kv[1], kv[0])):
            example = next(r for r in rows if r.category == category)
            lines.append(
                f"| {category} | {count} | {short(example.spec)}: {example.detail.splitlines()[0][:140] if example.detail else ''} |"
            )
    tools = sum(r.tools for r in results)
    lines += [
        "",
        f"tools listed and checked: {tools}; "
        f"warnings: {sum(r.warnings for r in results)}; skipped-operation errors: {sum(r.errors for r in results)}",
    ]
    calls = [r.calls for r in results if r.calls]
    if calls:
        lines += ["", calls_summary(calls)]
    return "\n".join(lines)


def calls_summary(calls: Iterable[Mapping[str, Any]]) -> str:
    total: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    other: Counter[str] = Counter()
    for c in calls:
        total.update(c.get("counts", {}))
        reasons.update(c.get("rejections", {}))
        other.update({f"client error: {k}": v for k, v in c.get("client_errors", {}).items()})
        other.update(
            {(k if "cannot route" in k else f"Prism, unrelated: {k}"): v for k, v in c.get("unrelated", {}).items()}
        )
        other.update({f"calls crashed: {k}": v for k, v in c.get("crashes", {}).items()})
    sent = total["accepted"] + total["rejected"]
    rate = 100.0 * total["accepted"] / sent if sent else 0.0
    lines = [
        f"calls: {sent} requests reached Prism, {total['accepted']} accepted ({rate:.2f}%), "
        f"{total['rejected']} rejected; {total['security']} answered 401/403 (security unmet); "
        f"{total['unroutable']} cannot be routed by Prism (path keys with a fragment or query); "
        f"{total['not-sent']} not sent (the server refused the arguments); "
        f"{total['no-arguments']} tools without generatable arguments"
    ]
    if reasons:
        lines += ["", "| rejection | requests |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in reasons.most_common(30)]
    if other:
        lines += ["", "| not counted in the rate | calls |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in other.most_common(30)]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    from corpus_own_tests import SELECTION as own_tests_selection  # tools/corpus_own_tests.py

    parser = argparse.ArgumentParser(
        prog="corpus-run", description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("specs", nargs="*", help="explicit spec files (default: selected with tools/list-specs)")
    parser.add_argument("--set", default="all", choices=("all", "directory", "examples", "octokit"))
    parser.add_argument(
        "--named", nargs="+", metavar="NAME", help="list-specs --named names (github, stripe, ...; all)"
    )
    parser.add_argument("--max-ops", type=int)
    parser.add_argument("--min-ops", type=int)
    parser.add_argument("--version", choices=("2.0", "3.0", "3.1"))
    parser.add_argument("--sample", type=int, help="a deterministic sample of N specs (with --seed)")
    parser.add_argument("--seed", default="1")
    parser.add_argument(
        "--shuffle",
        metavar="SEED",
        help="run in a deterministic shuffled order (a partial run is " "then an unbiased sample)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per spec (default 300)")
    parser.add_argument("--time-limit", type=float, default=4 * 3600, help="no spec starts after this many seconds")
    parser.add_argument(
        "--validate",
        choices=("auto", "on", "off"),
        default="auto",
        help=f"openapi-spec-validator: auto = only for files up to {BIG_BYTES:,} bytes",
    )
    parser.add_argument("--calls", action="store_true", help="also call every tool against a Prism mock of the spec")
    parser.add_argument("--examples", type=int, default=2, help="--calls: argument sets per tool (default 2)")
    parser.add_argument("--max-tools", type=int, default=60, help="--calls: tools called per spec (default 60)")
    parser.add_argument(
        "--own-tests",
        nargs="?",
        const=own_tests_selection,
        metavar="EXPR",
        help="also run the generated package's own tests (a pytest -k selection; default: the per-tool tests)",
    )
    parser.add_argument("--json", type=Path, help="write every outcome to this JSON file")
    parser.add_argument(
        "--jsonl",
        type=Path,
        help="append each outcome to this JSON-lines file as it arrives; "
        "specs already there are not run again (resume)",
    )
    parser.add_argument("--quiet", action="store_true", help="no per-spec progress lines on stderr")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    specs = select(args)
    if args.shuffle is not None:  # any prefix of the run is then a uniform sample (useful with --time-limit/--jsonl)
        import hashlib

        specs.sort(key=lambda s: hashlib.sha256(f"{args.shuffle}:{short(s)}".encode()).hexdigest())
    if not specs:
        print("corpus-run: no specs selected", file=sys.stderr)
        return 2
    options: dict[str, Any] = {
        "validate": {"auto": None, "on": True, "off": False}[args.validate],
        "calls": args.calls,
        "examples": args.examples,
        "max_tools": args.max_tools,
        "own_tests": args.own_tests,
        "list_timeout": args.timeout * 0.75,  # a hung listing is told apart from a slow generation
    }
    started = time.monotonic()
    results = run_all(
        specs, options, args.jobs, args.timeout, args.time_limit, progress=not args.quiet, jsonl=args.jsonl
    )
    text = summary(results)
    print(text)
    print(f"\nwall time: {time.monotonic() - started:.0f} s with {args.jobs} workers")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=1) + "\n", encoding="utf-8")
    return 1 if any(r.outcome == FAIL for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())

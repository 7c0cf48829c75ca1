#!/usr/bin/env python3
"""tools/list tokens of the generated `tools` surface per named spec (cl100k, tools.json exactly as generated).

Usage: .venv/bin/python bench/tokens.py [--specs github,stripe,asana,slack] [--compact] [--markdown]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from codegen.config import Config  # noqa: E402
from codegen.emit.render import _dump  # noqa: E402
from codegen.pipeline import analyze  # noqa: E402
from codegen.surface.tokens import count_tokens  # noqa: E402

DEFAULT_SPECS = "github,stripe,asana,slack"


def named_specs() -> dict[str, str]:
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "list-specs"), "--named", "--tsv"],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    ).stdout
    return {line.split("\t")[0]: line.split("\t")[1] for line in out.splitlines() if "\t" in line}


def measure(spec: str, compact: bool) -> tuple[int, int, int]:
    """(tools, bytes, tokens) of tools.json for `spec`."""
    _, tools, _ = analyze(Config(spec=spec, validate=False, compact=compact))
    text = _dump([tool.to_json() for tool in tools])
    return len(tools), len(text.encode()), count_tokens(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", default=DEFAULT_SPECS, help=f"comma-separated named specs (default {DEFAULT_SPECS})")
    parser.add_argument("--compact", action="store_true", help="generate with --compact")
    args = parser.parse_args()
    paths = named_specs()
    print("| spec | tools | tools.json bytes | tools/list tokens (cl100k) |")
    print("|---|---:|---:|---:|")
    for name in args.specs.split(","):
        start = time.monotonic()
        count, size, tokens = measure(paths[name], args.compact)
        print(f"| {name} | {count} | {size:,} | {tokens:,} |", flush=True)
        print(f"{name}: {time.monotonic() - start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()

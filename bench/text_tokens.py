#!/usr/bin/env python3
"""tools/list tokens (cl100k) of the generated `tools` surface per named spec: the tools.json that
`mcp-codegen` writes, which the server sends as it is.

Usage:
  .venv/bin/python bench/text_tokens.py                                # github, stripe, asana, slack
  .venv/bin/python bench/text_tokens.py --specs github --compact
  .venv/bin/python bench/text_tokens.py --root /tmp/base               # the generator of another checkout
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from codegen.surface.tokens import count_tokens  # noqa: E402
from named_specs import named_specs  # noqa: E402  (tools/named_specs.py)

DEFAULT_SPECS = "github,stripe,asana,slack"
TIMEOUT = 900  # seconds for one generation


def generated_tools_json(spec: str, root: Path, compact: bool) -> str:
    """tools.json as `mcp-codegen` (run from `root`) writes it for `spec`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        command = [sys.executable, "-m", "codegen", spec, "-o", str(out), "-q", "--no-validate"]
        env = {**os.environ, "PYTHONPATH": str(root)}
        subprocess.run(command + (["--compact"] if compact else []), check=True, cwd=root, env=env, timeout=TIMEOUT)
        (found,) = out.glob("src/*/tools.json")
        return found.read_text(encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", default=DEFAULT_SPECS, help=f"comma-separated named specs (default {DEFAULT_SPECS})")
    parser.add_argument("--compact", action="store_true", help="generate with --compact")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose generator runs (default: this one)")
    args = parser.parse_args()
    paths = named_specs()
    print("| spec | tools | tools.json bytes | tools/list tokens (cl100k) |")
    print("|---|---:|---:|---:|")
    for name in args.specs.split(","):
        start = time.monotonic()
        text = generated_tools_json(paths[name], args.root.resolve(), args.compact)
        count = text.count('"inputSchema":')
        print(f"| {name} | {count:,} | {len(text.encode()):,} | {count_tokens(text):,} |", flush=True)
        print(f"{name}: {time.monotonic() - start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()

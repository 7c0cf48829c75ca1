"""The old side of the tool-surface report: the generated package as committed at the base (a git commit), or as
it is in the working tree before a regeneration. Read with `git show`, bounded in time and size; any failure is a
note in the report, never a crash.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..surface.listed import ListedTool, read_listed
from ..emit.write import MANIFEST

GIT_TIMEOUT = 60.0
MAX_FILE_BYTES = 256 * 1024 * 1024  # a committed tools.json of Microsoft Graph is ~50 MB
TOOLS_FILE = re.compile(r"src/[A-Za-z0-9_]+/tools\.json")
REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/@{}^~-]{0,199}")  # a commit, branch or tag name (no option, no space)


@dataclass(frozen=True)
class Base:
    tools: tuple[ListedTool, ...]
    text: str  # the committed tools.json ("" when there is none)
    note: str  # what was compared with, for the report


def git(args: Sequence[str], cwd: Path, timeout: float = GIT_TIMEOUT) -> tuple[int, bytes]:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return 1, b""
    return done.returncode, done.stdout


def resolve(ref: str, cwd: Path) -> str | None:
    """The commit `ref` names, fetching it once from `origin` when the clone lacks it (a shallow checkout)."""
    if not REF.fullmatch(ref):
        return None
    for attempt in range(2):
        code, out = git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd)
        if code == 0:
            return out.decode().strip()
        if attempt == 0:
            git(["fetch", "--quiet", "--no-tags", "--depth=1", "origin", ref], cwd, timeout=120)
    return None


def read_base(out: Path, commit: str | None, label: str, cwd: Path) -> Base:
    """The package in `out` at `commit` (None: the working tree as it is now)."""
    where = f"at base `{label}`" if commit else "in the working tree"
    if commit is None:
        return _from(lambda relative: _read_file(out / relative), where)
    code, top = git(["rev-parse", "--show-toplevel"], cwd)
    if code != 0:
        return Base((), "", "Not a git repository; compared with no tools.")
    try:
        prefix = out.resolve().relative_to(Path(top.decode().strip()).resolve()).as_posix()
    except ValueError:
        return Base((), "", f"`{out}` is outside the git repository; compared with no tools")

    def show(relative: str) -> str | None:
        name = f"{prefix}/{relative}" if prefix != "." else relative
        code, data = git(["show", f"{commit}:{name}"], cwd)
        if code != 0 or len(data) > MAX_FILE_BYTES:
            return None
        return data.decode("utf-8", errors="replace")

    return _from(show, where)


def _read_file(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _from(read: Callable[[str], str | None], where: str) -> Base:
    manifest = read(MANIFEST)
    if manifest is None:
        return Base((), "", f"No generated package {where}: every tool is listed as added.")
    try:
        files = json.loads(manifest).get("files", [])
        tools_file = next(f for f in files if isinstance(f, str) and TOOLS_FILE.fullmatch(f))
    except (ValueError, AttributeError, StopIteration):
        return Base((), "", f"The package {where} has no readable manifest or tools.json; compared with no tools.")
    tools_text = read(tools_file)
    routes_text = read(tools_file.replace("tools.json", "routes.json"))
    if tools_text is None or routes_text is None:
        return Base((), "", f"The package {where} lacks {tools_file} or routes.json; compared with no tools.")
    try:
        tools = read_listed(tools_text, routes_text)
    except ValueError as exc:
        return Base((), "", f"The tools of the package {where} cannot be read ({exc}); compared with no tools.")
    return Base(tuple(tools), tools_text, f"Compared with the generated package {where}.")

"""What `mcp-codegen ci` is asked to do: flags, else the Action's inputs (`INPUT_<NAME>`, upper case, `-` as `_`),
and what it runs in: the standard `GITHUB_*` variables. Nothing here touches the network or the repository.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from ..problems import Problem, error

Mode = Literal["check", "generate"]
MAX_EVENT_BYTES = 8 * 1024 * 1024  # GitHub's event payloads are far smaller
MARKER = "<!-- mcp-codegen:tool-surface"  # + an id and " -->": one comment per set of servers, found again later


@dataclass(frozen=True)
class CiInputs:
    spec: str | None = None
    output: str | None = None
    config: str | None = None
    overlays: tuple[str, ...] = ()
    args: tuple[str, ...] = ()  # extra generate flags, already split
    mode: Mode = "check"
    base_ref: str | None = None
    comment: bool = True


@dataclass(frozen=True)
class GitHubContext:
    event_name: str = ""
    event: Mapping[str, Any] = field(default_factory=dict)
    repository: str = ""
    api_url: str = ""
    token: str = field(default="", repr=False)
    step_summary: Path | None = None
    output: Path | None = None
    workspace: Path | None = None
    runner_temp: Path | None = None  # RUNNER_TEMP: where the report file goes (else the system's temp folder)
    actions: bool = False  # running on GitHub Actions (GITHUB_ACTIONS=true): workflow commands are understood

    @property
    def pull_request(self) -> Mapping[str, Any] | None:
        pr = self.event.get("pull_request")
        return pr if self.event_name.startswith("pull_request") and isinstance(pr, dict) else None

    @property
    def pr_number(self) -> int | None:
        number = (self.pull_request or {}).get("number", self.event.get("number"))
        return number if isinstance(number, int) and self.pull_request is not None else None

    @property
    def base_sha(self) -> str | None:
        """The pull request's base commit; for a push, the commit before it (None for a new branch)."""
        base = (self.pull_request or {}).get("base")
        if isinstance(base, dict) and isinstance(base.get("sha"), str):
            return str(base["sha"])
        before = self.event.get("before") if self.event_name == "push" else None
        if isinstance(before, str) and before.strip("0"):
            return before
        return None

    @property
    def from_fork(self) -> bool:
        pr = self.pull_request or {}
        head, base = pr.get("head"), pr.get("base")
        if not isinstance(head, dict) or not isinstance(base, dict):
            return False
        head_repo, base_repo = head.get("repo"), base.get("repo")
        if not isinstance(head_repo, dict) or not isinstance(base_repo, dict):
            return False
        return bool(head_repo.get("full_name")) and head_repo.get("full_name") != base_repo.get("full_name")


def env_input(env: Mapping[str, str], name: str) -> str | None:
    """`INPUT_BASE_REF` for `base-ref` (GitHub's runner itself keeps the `-`: `INPUT_BASE-REF`, also read)."""
    for key in (f"INPUT_{name.upper().replace('-', '_')}", f"INPUT_{name.upper()}"):
        value = env.get(key)
        if value is not None and value.strip():
            return value.strip()
    return None


def read_inputs(flags: Mapping[str, Any], env: Mapping[str, str]) -> tuple[CiInputs | None, list[Problem]]:
    """Flags win over `INPUT_*`; `None` flags are not given. Lists (overlays) are one per line or comma-separated."""
    problems: list[Problem] = []

    def pick(name: str) -> Any:
        value = flags.get(name.replace("-", "_"))
        return value if value not in (None, (), []) else env_input(env, name)

    overlays = pick("overlays")
    if isinstance(overlays, str):
        overlays = [part.strip() for line in overlays.splitlines() for part in line.split(",") if part.strip()]
    args = pick("args")
    if isinstance(args, str):
        try:
            args = shlex.split(args)
        except ValueError as exc:
            problems.append(error(f"input 'args' is not a valid shell word list: {exc}"))
            args = ()
    mode = pick("mode") or "check"
    if mode not in ("check", "generate"):
        problems.append(error(f"input 'mode' must be 'check' or 'generate', got {mode!r}"))
    comment = pick("comment")
    if isinstance(comment, str):
        if comment.lower() not in ("true", "false"):
            problems.append(error(f"input 'comment' must be 'true' or 'false', got {comment!r}"))
        comment = comment.lower() == "true"
    if problems:
        return None, problems
    return (
        CiInputs(
            spec=pick("spec"),
            output=pick("output"),
            config=pick("config"),
            overlays=tuple(overlays or ()),
            args=tuple(args or ()),
            mode=cast(Mode, mode),
            base_ref=pick("base-ref"),
            comment=True if comment is None else bool(comment),
        ),
        [],
    )


def read_context(env: Mapping[str, str]) -> tuple[GitHubContext, list[Problem]]:
    """The GITHUB_* variables; an unreadable event file is a problem, not a crash (the run goes on without it)."""
    problems: list[Problem] = []
    event: Any = {}
    event_path = env.get("GITHUB_EVENT_PATH")
    if event_path:
        try:
            path = Path(event_path)
            if path.stat().st_size > MAX_EVENT_BYTES:
                raise ValueError(f"larger than {MAX_EVENT_BYTES:,} bytes")
            event = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            problems.append(error(f"cannot read the event payload GITHUB_EVENT_PATH={event_path}: {exc}"))
            event = {}
    context = GitHubContext(
        event_name=env.get("GITHUB_EVENT_NAME", ""),
        event=event if isinstance(event, dict) else {},
        repository=env.get("GITHUB_REPOSITORY", ""),
        api_url=env.get("GITHUB_API_URL", "") or "https://api.github.com",
        token=env.get("GITHUB_TOKEN", "") or env_input(env, "token") or "",
        step_summary=Path(env["GITHUB_STEP_SUMMARY"]) if env.get("GITHUB_STEP_SUMMARY") else None,
        output=Path(env["GITHUB_OUTPUT"]) if env.get("GITHUB_OUTPUT") else None,
        workspace=Path(env["GITHUB_WORKSPACE"]) if env.get("GITHUB_WORKSPACE") else None,
        runner_temp=Path(env["RUNNER_TEMP"]) if env.get("RUNNER_TEMP") else None,
        actions=env.get("GITHUB_ACTIONS") == "true",
    )
    return context, problems

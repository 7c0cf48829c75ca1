"""Ready-to-paste client configuration for a generated server: printed after generating and written
into the generated README (the template receives these as `clients`)."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

from .render import Project

PLACEHOLDER_URL = "https://api.example.com"


@dataclass(frozen=True, slots=True)
class ClientSnippet:
    client: str  # "Claude Desktop"
    where: str  # where the snippet goes
    language: str  # code fence language: json or sh
    text: str


def client_setup(project: Project, base_url: str | None) -> tuple[ClientSnippet, ...]:
    env = {f"{project.env_prefix}_BASE_URL": base_url or PLACEHOLDER_URL}
    stdio: dict[str, Any] = {"command": project.dist, "args": [], "env": env}
    env_flags = " ".join(f"-e {shlex.quote(f'{k}={v}')}" for k, v in env.items())
    return (
        ClientSnippet(
            "Claude Desktop",
            "claude_desktop_config.json (Settings > Developer > Edit Config)",
            "json",
            _json({"mcpServers": {project.dist: stdio}}),
        ),
        ClientSnippet(
            "Claude Code",
            "a shell (add --scope project to share it through .mcp.json)",
            "sh",
            f"claude mcp add {project.dist} {env_flags} -- {project.dist}\n"
            f"# or, with the server running over HTTP (see Docker below):\n"
            f"claude mcp add --transport http {project.dist} http://127.0.0.1:8000/mcp",
        ),
        ClientSnippet(
            "VS Code",
            ".vscode/mcp.json",
            "json",
            _json({"servers": {project.dist: {"type": "stdio", **stdio}}}),
        ),
        ClientSnippet(
            "Cursor",
            ".cursor/mcp.json (or ~/.cursor/mcp.json for every project)",
            "json",
            _json({"mcpServers": {project.dist: stdio}}),
        ),
    )


def _json(data: Any) -> str:
    return json.dumps(data, indent=2)


def format_snippets(snippets: tuple[ClientSnippet, ...]) -> str:
    """Plain text for the terminal."""
    blocks = [f"{s.client} — {s.where}:\n{s.text}" for s in snippets]
    return "\n\n".join(blocks)

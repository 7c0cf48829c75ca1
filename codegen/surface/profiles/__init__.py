"""Client profiles: what each MCP client accepts (rules), the transforms that make the tools fit
(names, refs, shape, applied by apply.py) and the checker that proves it (check.py). docs/clients.md."""

from .apply import apply_profiles
from .check import Violation, check_tools, summarize
from .rules import CLIENTS, DEFAULT_CLIENTS, PROFILES, Rules, tool_cap, unknown_clients

__all__ = [
    "CLIENTS",
    "DEFAULT_CLIENTS",
    "PROFILES",
    "Rules",
    "Violation",
    "apply_profiles",
    "check_tools",
    "summarize",
    "tool_cap",
    "unknown_clients",
]

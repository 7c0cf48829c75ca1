"""mcp-codegen: generate a typed Python MCP server package from an OpenAPI document."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("mcp-codegen")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = ["__version__"]

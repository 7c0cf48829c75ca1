"""mcp-codegen: generate a typed Python MCP server package from an OpenAPI document."""

# the one place the version is written (pyproject.toml reads it from here): no package metadata is read at start-up
__version__ = "0.1.0"

__all__ = ["__version__"]

"""`python -m codegen` is the `mcp-codegen` command."""

from .cli import main

main()

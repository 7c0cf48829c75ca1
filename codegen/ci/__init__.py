"""`mcp-codegen ci`: the one command behind the GitHub Action, the pre-commit hooks and other CI systems.

inputs (flags, INPUT_*, GITHUB_*) -> servers (Configs) -> runner (generate/check, report, summary, outputs, comment).
"""

"""Emitting the package: `ToolSpec`s + Config -> files in memory -> formatted -> written or checked.

In: the tool surface, the IR's API-level facts (title, version, servers, security schemes) and the Config.
Out: {relative path: text}, then the folder on disk (or a --check report). Only `write.py` touches the disk.
"""

"""One key for a parsed JSON (or YAML) value's content: large APIs repeat the same inline schemas on thousands
of operations, and the steps that read them (normalize, the schema conversion) do their work once per content."""

from __future__ import annotations

import pickle
from typing import Any


def content_key(node: Any) -> bytes | None:
    """A key equal for two values only when they hold the same values, of the same types, keys in the same order
    (their pickles: unlike JSON text, these tell 1 from "1" and 1.0); None for a value that cannot be pickled."""
    try:
        return pickle.dumps(node, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, ValueError, AttributeError, RecursionError):
        return None

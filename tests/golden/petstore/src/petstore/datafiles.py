"""The package's data files (tools.json, routes.json, search.json, ...), parsed.

A large API's files hold millions of small objects that live as long as the server and refer to nothing that
refers back to them. While one is parsed the cyclic garbage collector is paused: it would otherwise scan the
growing heap again and again for nothing to free (twice the parse itself on Microsoft Graph's 27 MB tools.json).
Then everything alive joins the collector's oldest generation at once (gc.freeze, then gc.unfreeze) instead of
being walked through the younger ones on the way; it is still freed like any other object.
"""

from __future__ import annotations

import gc
import json
from importlib.resources import files
from typing import Any


def read(name: str) -> Any:
    """The JSON file `name` of this package, parsed."""
    text = files(__package__).joinpath(name).read_text(encoding="utf-8")
    enabled = gc.isenabled()
    gc.disable()
    try:
        return json.loads(text)
    finally:
        gc.freeze()  # into the permanent generation, and back into the oldest: not scanned on the way
        gc.unfreeze()
        if enabled:
            gc.enable()

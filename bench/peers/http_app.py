"""ASGI factory for uvicorn --factory: a generated server's stateless streamable-HTTP app.

    BENCH_PACKAGE=github PYTHONPATH=<bench/peers>:<generated>/src \
        python -m uvicorn --factory http_app:app --workers 2 --host 127.0.0.1 --port PORT

It builds the app exactly as the generated `cli.main()` does for `--transport http` (`build_server(settings)`
then the package's own `web.http_app`: the stateless app, its guard and its routing by method); it exists only
because uvicorn needs an import string, not an app object, to start more than one worker process.
The upstream base URL comes from the package's own `<PREFIX>_BASE_URL` variable.
"""

from __future__ import annotations

import importlib
import os
from typing import Any


def app() -> Any:
    package = os.environ["BENCH_PACKAGE"]
    settings = importlib.import_module(package + ".settings").Settings.from_env()
    server = importlib.import_module(package + ".server").build_server(settings)
    return importlib.import_module(package + ".web").http_app(server, settings, host="127.0.0.1")

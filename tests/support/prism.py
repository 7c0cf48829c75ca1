"""Start a Stoplight Prism mock of an OpenAPI document for a test; stdlib only.

    from support.prism import prism_server        # or tests.support.prism, depending on sys.path

    with prism_server("fixtures/petstore.yaml") as base_url:   # e.g. "http://127.0.0.1:41234"
        httpx.get(base_url + "/store/order/1", headers={"Accept": "application/json"})

As a pytest fixture (conftest.py):

    @pytest.fixture(scope="session")
    def petstore_url() -> Iterator[str]:
        with prism_server(PETSTORE) as url:
            yield url

It runs the project's `tools/prism` script, which installs the pinned Prism on first use (npm, ~10 s) into
$MCP_CODEGEN_TOOLS (default ~/.cache/mcp-codegen-tools) and binds 127.0.0.1 on a port chosen by the OS. The server
and everything it started live in their own process group and are stopped on exit, even when the body raises.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import IO, Iterator, Sequence

REPO_ROOT = Path(__file__).resolve().parents[2]
PRISM_SCRIPT = REPO_ROOT / "tools" / "prism"

__all__ = ["PRISM_SCRIPT", "PrismError", "prism_server"]


class PrismError(RuntimeError):
    """Prism could not be started; the message ends with the tail of its log."""


@contextlib.contextmanager
def prism_server(
    spec_path: str | os.PathLike[str],
    *,
    port: int | None = None,
    dynamic: bool = False,
    extra_args: Sequence[str] = (),
    timeout: float = 180.0,
    env: dict[str, str] | None = None,
) -> Iterator[str]:
    """Yield the base URL (no trailing slash) of a Prism mock serving `spec_path` on 127.0.0.1.

    `port`: fixed port (default: a free one). `dynamic`: generate responses from schemas instead of examples.
    `extra_args`: passed to `prism mock` as is (e.g. ["--seed", "1"]). `timeout`: seconds to wait for the
    server to answer, a first install included. `env`: merged over os.environ for the script.
    """
    cmd = [str(PRISM_SCRIPT), os.fspath(spec_path), "--timeout", str(max(1, math.ceil(timeout)))]
    if port is not None:
        cmd += ["--port", str(port)]
    if dynamic:
        cmd.append("--dynamic")
    if extra_args:
        cmd += ["--", *extra_args]
    log = tempfile.TemporaryFile()  # Prism's log; a file, so a chatty server can never block on a full pipe
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=log,
        start_new_session=True,  # own process group: _stop() reaches Prism and its helpers too
        env=None if env is None else {**os.environ, **env},
    )
    try:
        assert proc.stdout is not None
        line = _first_line(proc.stdout, timeout + 15)  # the script enforces `timeout` itself; this is a backstop
        if not line.startswith("http://"):
            _stop(proc)
            log.seek(0)
            tail = log.read()[-4000:].decode(errors="replace")
            raise PrismError(f"prism did not start for {spec_path} (exit {proc.poll()}):\n{tail}")
        yield line
    finally:
        _stop(proc)
        if proc.stdout is not None:
            proc.stdout.close()
        log.close()


def _first_line(stream: IO[bytes], timeout: float) -> str:
    first: list[bytes] = []
    reader = threading.Thread(target=lambda: first.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return first[0].decode().strip() if first else ""


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        _signal_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            pass
    _signal_group(proc, signal.SIGKILL)  # whatever is left in the group
    proc.wait()


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass

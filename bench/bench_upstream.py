"""The benchmark's upstream API: a raw ASGI app under uvicorn in its own process, answering every request at once
with one fixed JSON body (and its own probe, /__bench__/stats: requests counted, the last one seen). Binds
127.0.0.1; exits when the harness goes away or after its time.

    python bench_upstream.py --_upstream BODY MAX_SECONDS     # what Upstream.start runs: prints the port
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

from harness import LIVE_PGIDS

UPSTREAM_FLAG = "--_upstream"
DEFAULT_BODY = '{"id":1,"name":"bench","status":"ok"}'


def upstream_main(body: bytes, max_seconds: float) -> None:
    import socket
    import threading

    import uvicorn

    state: dict[str, Any] = {"count": 0, "last": None}
    start = {
        "type": "http.response.start",
        "status": 200,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
    }
    resp = {"type": "http.response.body", "body": body}

    def last_as_json() -> Any:
        last = state["last"]
        if last is None:
            return None
        method, path, qs, hdrs, chunks = last
        keep = {"accept", "content-type", "user-agent"}
        return {
            "method": method,
            "path": path,
            "query": qs.decode("latin-1"),
            "headers": {k.decode("latin-1"): v.decode("latin-1") for k, v in hdrs if k.decode("latin-1") in keep},
            "body": b"".join(chunks).decode("utf-8", "replace"),
        }

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        chunks = []
        more = True
        while more:
            msg = await receive()
            chunks.append(msg.get("body", b""))
            more = msg.get("more_body", False)
        path = scope["path"]
        if path == "/__bench__/stats":  # the harness's own probe, not counted
            out = json.dumps({"count": state["count"], "last": last_as_json()}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(out)).encode())],
                }
            )
            await send({"type": "http.response.body", "body": out})
            return
        state["count"] += 1
        state["last"] = (
            scope["method"],
            path,
            scope["query_string"],
            scope["headers"],
            chunks,
        )  # cheap; JSON on demand
        await send(start)
        await send(resp)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    print(sock.getsockname()[1], flush=True)

    def watchdog() -> None:  # exit when the harness goes away (stdin EOF) or after max_seconds
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
        time.sleep(max_seconds)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="off", timeout_keep_alive=300, backlog=1024
    )
    uvicorn.Server(config).run(sockets=[sock])


class Upstream:
    def __init__(self, body: str, max_seconds: float) -> None:
        self.body = body
        self.max_seconds = max_seconds
        self.proc: subprocess.Popen[str] | None = None
        self.base_url = ""

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), UPSTREAM_FLAG, self.body, str(self.max_seconds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        LIVE_PGIDS.add(self.proc.pid)
        assert self.proc.stdout
        port = int(self.proc.stdout.readline().strip() or 0)
        if not port:
            raise RuntimeError("upstream failed to start")
        self.base_url = f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        if self.proc:
            LIVE_PGIDS.discard(self.proc.pid)


async def upstream_stats(hc: Any) -> dict[str, Any]:
    r = await hc.get("/__bench__/stats")
    return r.json()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == UPSTREAM_FLAG:
        upstream_main(sys.argv[2].encode(), float(sys.argv[3]))
    else:
        sys.exit(__doc__)

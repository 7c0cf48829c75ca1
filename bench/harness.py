"""The benchmark's processes, shared by mcp_bench.py, http_bench.py and profile_calls.py: every process group it
starts is killed on any exit path; a server's stdio for the official SDK client (spawned here, so that its pid is
known for CPU and memory, its lines read whole however long, the last byte timestamped); the CPU time and memory
of a process tree."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

LINE_LIMIT = 1 << 30  # a tools/list response is one line; GitHub-sized ones are >10 MB

# Process groups we spawned and have not reaped yet: killed on any exit path.
LIVE_PGIDS: set[int] = set()


def kill_all_children() -> None:
    for pgid in list(LIVE_PGIDS):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        LIVE_PGIDS.discard(pgid)


def on_signal(signum: int, _frame: Any) -> None:
    kill_all_children()
    sys.exit(128 + signum)


# --------------------------------------------------------------------------------------------------
# Stdio transport for the official SDK Client: we spawn the process ourselves so we know its pid
# (memory), read lines in O(n) (multi-MB tools/list lines), and timestamp the last byte received.
# --------------------------------------------------------------------------------------------------


class StdioProc:
    def __init__(self, argv: list[str], env: dict[str, str], stderr_path: Path, capture_tools: bool = False):
        self.argv = argv
        self.env = env
        self.stderr_path = stderr_path
        self.capture_tools = capture_tools
        self.proc: asyncio.subprocess.Process | None = None
        self.t_spawn = 0.0
        self.t_last_rx = 0.0
        self.t_tools_rx = 0.0
        self.tools_results: list[dict[str, Any]] = []
        self.tools_wire_bytes = 0
        self.junk_lines = 0
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def pid(self) -> int:
        assert self.proc
        return self.proc.pid

    async def __aenter__(self) -> tuple[Any, Any]:
        import anyio
        from mcp.shared.message import SessionMessage

        self._errf = open(self.stderr_path, "ab")
        self.t_spawn = time.perf_counter()
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._errf,
            env=self.env,
            start_new_session=True,
            limit=LINE_LIMIT,
        )
        LIVE_PGIDS.add(self.proc.pid)
        self._read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_send, self._write_recv = anyio.create_memory_object_stream[SessionMessage](0)
        self._tasks = [asyncio.create_task(self._reader()), asyncio.create_task(self._writer())]
        return read_recv, write_send

    async def _reader(self) -> None:
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        assert self.proc and self.proc.stdout
        try:
            while True:
                line = await self.proc.stdout.readline()
                if not line:
                    break
                t = time.perf_counter()
                self.t_last_rx = t
                s = line.strip()
                if not s:
                    continue
                try:
                    msg = types.jsonrpc_message_adapter.validate_json(s, by_name=False)
                except ValueError:
                    self.junk_lines += 1  # e.g. a log line on stdout; the SDK would surface it as an error
                    continue
                if self.capture_tools:
                    res = getattr(msg, "result", None)
                    if isinstance(res, dict) and "tools" in res:
                        self.tools_results.append(res)
                        self.tools_wire_bytes += len(s)
                        self.t_tools_rx = t
                await self._read_send.send(SessionMessage(msg))
        except Exception:  # noqa: BLE001 - closed stream or broken pipe: the session sees EOF below
            pass
        finally:
            with contextlib.suppress(Exception):
                await self._read_send.aclose()

    async def _writer(self) -> None:
        assert self.proc and self.proc.stdin
        try:
            async with self._write_recv:
                async for sm in self._write_recv:
                    data = sm.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    self.proc.stdin.write(data.encode())
                    await self.proc.stdin.drain()
        except Exception:  # noqa: BLE001
            pass

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def stop(self, grace: float = 1.0) -> None:
        import anyio

        proc = self.proc
        if proc is None:
            return
        try:
            with anyio.CancelScope(shield=True):
                if proc.stdin:
                    with contextlib.suppress(Exception):
                        proc.stdin.close()
                if not await _wait_exit(proc, grace):
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(proc.pid, signal.SIGTERM)
                    if not await _wait_exit(proc, 1.0):
                        with contextlib.suppress(ProcessLookupError, PermissionError):
                            os.killpg(proc.pid, signal.SIGKILL)
                        await _wait_exit(proc, 2.0)
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # stragglers left in the group
            LIVE_PGIDS.discard(proc.pid)
            for t in self._tasks:
                t.cancel()
            self._errf.close()


async def _wait_exit(proc: asyncio.subprocess.Process, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while proc.returncode is None:
        if time.monotonic() >= end:
            return False
        await asyncio.sleep(0.01)
    return True


def tree_cpu(pid: int) -> float:
    """CPU seconds (user+system) used so far by the process tree; insensitive to other load on the machine."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0.0
    for p in procs:
        with contextlib.suppress(psutil.Error):
            c = p.cpu_times()
            total += c.user + c.system + c.children_user + c.children_system
    return total


def tree_memory(pid: int) -> dict[str, float]:
    """RSS now and peak (VmHWM) summed over the process tree, MiB."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return {}
    rss = hwm = 0
    for p in procs:
        with contextlib.suppress(psutil.Error):
            rss += p.memory_info().rss
        with contextlib.suppress(OSError, ValueError):
            for ln in Path(f"/proc/{p.pid}/status").read_text().splitlines():
                if ln.startswith("VmHWM:"):
                    hwm += int(ln.split()[1]) * 1024
    mib = 1024 * 1024
    return {"rss_mib": round(rss / mib, 1), "hwm_mib": round(hwm / mib, 1), "procs": len(procs)}

"""Work done by a forked helper process while this process goes on: a second CPU for a large API.

emit/format.py shares black's new work with one; surface/parallel.py maps a large API's operations in two processes;
ahead.py builds the discovery surface's search index (or the handshake) in one while this process fits the listing
and renders. What a helper computes is what this process would compute: the caller does the same work here when no
helper could start, or it failed or took too long, so the output never depends on whether one ran.

A helper is started only where that is safe and pays: fork is the platform's own start method (Linux), this
process has a single thread (a lock another thread holds at the fork would stay held in the helper), and a CPU is
idle now. MCP_CODEGEN_HELPERS=0 turns helpers off (one CPU's worth of work at a time, e.g. on a shared runner).
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

T = TypeVar("T")
SWITCH = "MCP_CODEGEN_HELPERS"  # 0 (off, no, false): no helper is ever started
TIMEOUT = 300.0  # seconds waited for a helper once this process needs its result; then the work is done here


def available() -> bool:
    """Whether a helper may be started now: not switched off, a safe fork, and an idle CPU."""
    if os.environ.get(SWITCH, "").strip().lower() in ("0", "off", "no", "false"):
        return False
    return can_fork() and spare_cpu()


def can_fork() -> bool:
    """Only where fork is the platform's own start method, and from a single thread."""
    import multiprocessing
    import threading

    return (
        sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
    )


def spare_cpu() -> bool:
    """Whether a CPU is idle now: 2+ CPUs this process may use, and fewer tasks running than that (this process
    included; Linux counts them in /proc/loadavg). Where that count cannot be read, the 1-minute load average is
    used instead, at most one less than the CPUs. On a busy machine a helper would only take turns with this one."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    if cpus < 2:
        return False
    running = _running()
    if running is not None:
        return running < cpus
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return False
    return load <= cpus - 1


def _running() -> int | None:
    """The tasks running or ready to run right now, the reader included (the fourth field of /proc/loadavg)."""
    try:
        with open("/proc/loadavg", "rb") as file:
            return int(file.read(256).split()[3].split(b"/")[0])
    except (OSError, IndexError, ValueError):
        return None


class Helper(Generic[T]):
    """A forked process computing `work()` (a function of what this process holds at the fork); `result` waits for
    what it returns. Always `end` it (or use it in a `with`): a helper whose result is not wanted is stopped."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._process, self._reader = _start(work)
        self._received = False  # result() has returned: never waited for again
        self._answered = False  # the helper answered: it is finishing, and is given a moment to
        self._value: T | None = None

    @property
    def started(self) -> bool:
        return self._process is not None

    def result(self, timeout: float = TIMEOUT) -> T | None:
        """What `work()` returned; None when the helper could not start, failed, or did not answer in `timeout`
        seconds (the caller then does the work itself)."""
        if self._received or self._reader is None:
            return self._value
        try:
            if self._reader.poll(timeout):
                answer = self._reader.recv()
                self._answered = True
                if isinstance(answer, tuple) and len(answer) == 2 and answer[0] == "done":
                    self._value = answer[1]
        except Exception:  # noqa: BLE001 - EOF (it died), OSError, a result that does not unpickle: done here
            self._value = None
        self._received = True
        self.end()
        return self._value

    def end(self) -> None:
        """Stop the helper (at once, unless it has answered) and release its pipe. A helper that has answered is only
        exiting, and is not waited for here: the system freeing its copy of a large process's memory takes 0.05-0.25
        s, while this process goes on (`reap` waits for it)."""
        reader, process = self._reader, self._process
        self._reader = self._process = None
        if reader is not None:
            reader.close()
        if process is not None and self._answered:
            _exiting.append(process)
        elif process is not None:
            process.join(timeout=0.0)
            if process.is_alive():
                process.kill()
                process.join()

    def __enter__(self) -> Helper[T]:
        return self

    def __exit__(self, *_: object) -> None:
        self.end()


_exiting: list[BaseProcess] = []  # helpers that answered and are exiting, until `reap`


def reap(timeout: float = 1.0) -> None:
    """Wait for the helpers that answered to finish exiting (stopped after `timeout` seconds each): called as the
    command ends, so that no process of its own outlives it and their CPU time is counted in its own."""
    while _exiting:
        process = _exiting.pop()
        process.join(timeout)
        if process.is_alive():
            process.kill()
            process.join()


def _start(work: Callable[[], object]) -> tuple[BaseProcess | None, Connection | None]:
    """The helper process and the end of the pipe it answers on; (None, None) when it cannot be started (no file
    descriptors or processes left, or this process is a daemon, which may have none)."""
    import multiprocessing

    _exiting[:] = [process for process in _exiting if process.is_alive()]  # those done are reaped (is_alive polls)
    context = multiprocessing.get_context("fork")
    try:
        reader, writer = context.Pipe(duplex=False)
    except OSError:
        return None, None
    try:
        process = context.Process(target=_serve, args=(work, writer), daemon=True)
        process.start()
    except Exception:  # noqa: BLE001 - OSError, or AssertionError in a daemonic process: done here instead
        reader.close()
        return None, None
    finally:
        writer.close()
    return process, reader


def _serve(work: Callable[[], object], writer: Connection) -> None:
    """The helper: sends what `work` returns; nothing when it fails (the parent does the work again and reports
    what goes wrong there)."""
    gc.freeze()  # the heap it shares with its parent is never scanned (nor copied) by a collection here
    _exiting.clear()  # its parent's helpers, not its own
    try:
        writer.send(("done", work()))
        writer.close()
    except BaseException:  # noqa: BLE001 - any failure (even an interrupt): quietly, the parent does it again
        return

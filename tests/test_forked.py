"""codegen/forked.py: a helper process computes what this process would, and anything it does not deliver is
None (the caller then does the work itself); helpers start only where safe, wanted and paying."""

from __future__ import annotations

import os
import sys
import time

import pytest

from codegen import forked

linux = pytest.mark.skipif(not forked.can_fork(), reason="fork is not this platform's start method")


@linux
def test_a_helper_returns_what_its_work_computes_from_the_forked_state() -> None:
    shared = {"numbers": list(range(1000))}  # built before the fork: the helper reads it without a copy sent
    with forked.Helper(lambda: sum(shared["numbers"])) as helper:
        assert helper.started
        shared["numbers"].append(10**6)  # after the fork: the helper's copy does not see it
        assert helper.result() == sum(range(1000))
        assert helper.result() == sum(range(1000))  # asked again: the same answer, no second wait


@linux
def test_a_helper_that_dies_fails_or_is_late_gives_none() -> None:
    with forked.Helper(lambda: os._exit(3)) as dead:
        assert dead.result() is None

    def fails() -> int:
        raise ValueError("no")

    with forked.Helper(fails) as failing:
        assert failing.result() is None
    started = time.monotonic()
    with forked.Helper(lambda: time.sleep(30)) as late:
        assert late.result(timeout=0.2) is None
    assert time.monotonic() - started < 10  # the late helper was stopped, not waited for


@linux
def test_ending_a_helper_stops_it() -> None:
    helper = forked.Helper(lambda: time.sleep(30))
    process = helper._process
    assert process is not None and process.is_alive()
    helper.end()
    assert not process.is_alive()
    assert helper.result() is None


@linux
def test_a_helper_that_has_answered_is_not_waited_for_while_it_exits() -> None:
    """Its result is taken at once; the helper then exits on its own time (here: a finalizer that sleeps, as a large
    helper's exit takes the system a while), and is not killed."""

    def work() -> int:
        from multiprocessing import util

        util.Finalize(None, time.sleep, args=(0.8,), exitpriority=10)  # runs as the helper exits
        return 42

    helper = forked.Helper(work)
    process = helper._process
    assert process is not None
    started = time.monotonic()
    assert helper.result() == 42
    assert time.monotonic() - started < 0.5 and process.is_alive()
    forked.reap()  # as the command ends: waited for until it has exited
    assert not process.is_alive() and process.exitcode == 0


def test_a_helper_that_cannot_start_gives_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forked, "_start", lambda work: (None, None))
    helper = forked.Helper(lambda: 1)
    assert not helper.started and helper.result() is None


@pytest.mark.parametrize(
    ("cpus", "running", "load", "spare"),
    [
        (2, 1, 1.8, True),  # only this process runs now: the 1-minute average's past load does not matter
        (2, 2, 0.1, False),  # another task runs now
        (4, 3, 3.0, True),
        (2, None, 0.4, True),  # no count to read: the 1-minute load average
        (2, None, 1.6, False),
        (1, 1, 0.0, False),  # one CPU
    ],
)
def test_a_spare_cpu_is_one_idle_now(
    monkeypatch: pytest.MonkeyPatch, cpus: int, running: int | None, load: float, spare: bool
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)))
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(forked, "_running", lambda: running)
    assert forked.spare_cpu() is spare


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/loadavg is Linux's")
def test_the_running_count_includes_this_process() -> None:
    running = forked._running()
    assert running is not None and running >= 1


@pytest.mark.parametrize("value", ["0", "off", "no", "false", "OFF"])
def test_helpers_can_be_switched_off(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setattr(forked, "spare_cpu", lambda: True)
    monkeypatch.setattr(forked, "can_fork", lambda: True)
    monkeypatch.setenv(forked.SWITCH, value)
    assert not forked.available()
    monkeypatch.setenv(forked.SWITCH, "1")
    assert forked.available()

"""emit/format.py: black's output for each generated .py, from the cache or formatted; on a cold cache a forked
helper formats about half of the new text, with the same output, and whatever it does not deliver is formatted here."""

from __future__ import annotations

import os
from collections.abc import Mapping

import black
import pytest

from codegen import forked
from codegen.emit import cache
from codegen.emit import format as fmt

MODULE = '''"""A module."""


def f(a, b):
    return {'a': a, 'b': [b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, b]}
'''


def package(count: int, pad: int = 0) -> dict[str, str | bytes]:
    """`count` distinct .py files (each `pad` lines longer than the last), and files black never sees."""
    files: dict[str, str | bytes] = {"README.md": "# x\n", "tools.json": b"[]\n"}
    for i in range(count):
        files[f"src/pkg/m{i}.py"] = MODULE + f"X{i} = {i}\n" + "".join(f"Y{j} = {j}\n" for j in range(i * pad))
    return files


@pytest.fixture
def cold(monkeypatch: pytest.MonkeyPatch) -> None:
    """No disk cache and an empty memory cache (restored after), with a helper worth starting for small texts."""
    monkeypatch.setenv("MCP_CODEGEN_CACHE", "off")
    monkeypatch.setattr(cache, "_memory", {})
    monkeypatch.setattr(fmt, "SHARE_BYTES", 1)
    monkeypatch.setattr(forked, "spare_cpu", lambda: True)


def expected(files: Mapping[str, str | bytes]) -> dict[str, str | bytes]:
    return {p: black.format_str(t, mode=black.Mode()) if isinstance(t, str) else t for p, t in files.items()}


def test_helper_formats_half_and_output_is_blacks(cold: None) -> None:
    files = package(8, pad=40)
    share = fmt._helper_share({p: t for p, t in files.items() if isinstance(t, str)})
    assert 0 < len(share) < 8  # about half the text, by size
    formatted, problems = fmt.format_files(files)
    assert problems == []
    assert formatted == expected(files) and list(formatted) == list(files)


def test_helper_that_fails_is_made_up_for(cold: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fmt, "_black_all", lambda texts: os._exit(3))  # the helper dies without a word
    files = package(6)
    formatted, problems = fmt.format_files(files)
    assert problems == [] and formatted == expected(files)


def test_invalid_code_in_the_helpers_share_is_reported(cold: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fmt, "_helper_share", lambda new: {p: new[p] for p in new if p.endswith(("broken.py", "1.py"))})
    files = package(6)
    files["src/pkg/broken.py"] = "def f(:\n"
    formatted, problems = fmt.format_files(files)
    assert len(problems) == 1 and "generated src/pkg/broken.py" in problems[0].message
    assert formatted["src/pkg/m0.py"] == black.format_str(str(files["src/pkg/m0.py"]), mode=black.Mode())


def test_no_helper_when_everything_is_cached(cold: None, monkeypatch: pytest.MonkeyPatch) -> None:
    files = package(4)
    first, _ = fmt.format_files(files)

    def no_fork(work: object) -> None:
        raise AssertionError("a helper was started with every text cached")

    monkeypatch.setattr(forked, "Helper", no_fork)
    assert fmt.format_files(files) == (first, [])


def test_no_helper_for_little_text_or_no_idle_cpu(cold: None, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = {p: t for p, t in package(4).items() if isinstance(t, str)}
    assert fmt._helper_share(texts)
    assert not fmt._helper_share(dict(list(texts.items())[:1]))  # one new file: nothing to share
    monkeypatch.setattr(forked, "spare_cpu", lambda: False)  # one CPU, or a busy machine
    assert not fmt._helper_share(texts)
    monkeypatch.setattr(forked, "spare_cpu", lambda: True)
    monkeypatch.setattr(fmt, "SHARE_BYTES", 10**9)
    assert not fmt._helper_share(texts)


def test_helper_that_cannot_start_is_made_up_for(cold: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forked, "_start", lambda work: (None, None))  # none can start
    files = package(6)
    assert fmt.format_files(files) == (expected(files), [])


def test_the_heap_is_frozen_only_while_the_helper_runs(cold: None) -> None:
    import gc

    assert gc.get_freeze_count() == 0
    fmt.format_files(package(6))
    assert gc.get_freeze_count() == 0

"""Shared fixtures: the in-process tests run on asyncio via anyio's pytest plugin."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

"""The packages generated for the named large APIs pass their own generated tests: GitHub, Stripe, Asana, Slack,
Twilio, Kubernetes and Jira (each package's own tests, run in the package folder with its `src` on
PYTHONPATH and this environment's runtime dependencies).

Those tests call every tool with sample arguments built from its inputSchema and checked with jsonschema before
use; a tool for which none can be built is skipped with the reason (test_sample_arguments), and at most 1% of an
API's tools may be.

CI cost: generating the seven packages and running all of their tests takes about 2.3 minutes of CPU (one core),
a fifth of it in `test_every_tool_sends_its_operation[auto]` (23% of GitHub's run), which repeats the per-tool
check of `[legacy]` through the other protocol mode (that mode is covered for every tool by the fixture packages,
tests/test_fixture_packages.py, and the golden petstore). It is deselected here, so each package runs a fixed
subset, all of its tests but that one case: about 2 minutes of CPU in all (8 minutes wall on a machine loaded
five times over).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import generate_into
from corpus_own_tests import UNBUILT, own_pytest
from named_specs import named_specs

pytestmark = pytest.mark.slow
NAMED = ("github", "stripe", "asana", "slack", "twilio", "kubernetes", "jira")
TOOLS = {"github": 1223, "stripe": 452, "asana": 167, "slack": 174, "twilio": 195, "kubernetes": 845, "jira": 499}
DESELECTED = ("tests/test_server.py::test_every_tool_sends_its_operation[auto]",)


@pytest.fixture(scope="module")
def named() -> dict[str, str]:
    return named_specs(install=True)


@pytest.mark.parametrize("name", NAMED)
def test_named_api_package_passes_its_own_tests(name: str, named: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / name
    generate_into(named[name], out)
    deselect = [option for test in DESELECTED for option in ("--deselect", test)]
    run = own_pytest(out, "-rs", *deselect, "tests", timeout=900)
    assert run.returncode == 0 and " passed" in run.stdout, run.stdout[-5000:]
    tools = json.loads(next((out / "src").glob("*/tools.json")).read_text(encoding="utf-8"))
    assert len(tools) == TOOLS[name]  # every operation is a tool
    unbuilt = UNBUILT.search(run.stdout)
    if unbuilt:  # named with the reason in the skip line
        assert int(unbuilt[1]) <= max(1, int(unbuilt[2]) // 100), unbuilt[0]

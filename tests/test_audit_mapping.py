"""tools/audit_mapping.py itself: what the whole-corpus run showed it reporting wrongly (its own mistakes)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import mini_spec, write_spec

REPO = Path(__file__).resolve().parents[1]


def audit(spec_path: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(REPO / "tools" / "audit_mapping.py"), str(spec_path), "--timeout", "120"]
    return subprocess.run(command, capture_output=True, text=True, timeout=180)


def test_the_audit_knows_the_spec_slips_and_json_enum_values(tmp_path: Path) -> None:
    # a required name the schema at that place never declares is the spec's own slip (box.com, digitalocean), even
    # when another schema declares a readOnly property of that name; enum [true, false, 0, 1] has four values
    # (nexmo), which Python's `1 == True` made look like a lost half
    hidden = {"type": "object", "properties": {"id": {"type": "string", "readOnly": True}}}
    sink = {"type": "object", "properties": {"token": {"type": "string"}}, "required": ["id"]}
    base = {"type": "object", "properties": {"sink": sink}}
    app = {"allOf": [{"$ref": "#/components/schemas/Base"}, {"properties": {"name": {"type": "string"}}}]}
    body = {
        "type": "object",
        "properties": {
            "lock": {"type": "object", "properties": {"access": {"type": "string"}}, "required": ["id"]},
            "apps": {"type": "array", "items": {"$ref": "#/components/schemas/App"}},
        },
    }
    flag = {"name": "delivered", "in": "query", "schema": {"enum": [True, False, 0, 1]}}
    ok = {
        "200": {
            "description": "ok",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}},
        }
    }
    paths = {
        "/things": {
            "post": {
                "operationId": "add",
                "requestBody": {"content": {"application/json": {"schema": body}}},
                "responses": ok,
            },
            "get": {"operationId": "list", "parameters": [flag], "responses": ok},
        }
    }
    spec = mini_spec(paths, components={"schemas": {"Thing": hidden, "Base": base, "App": app}})
    done = audit(write_spec(tmp_path, spec, "spec.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "checks run" in done.stdout

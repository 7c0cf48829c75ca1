"""End to end for the setup the generated README hands out: each client snippet's command and env start a
working server (official MCP client over stdio), and the Dockerfile's build steps and CMD give a working HTTP
server. There is no Docker daemon here, so the image is reproduced step by step: the build context is what
COPY takes minus .dockerignore, `RUN pip install .` runs in a fresh venv, and CMD runs as written except
that it binds 127.0.0.1 on a free port instead of 0.0.0.0:8000 (the container's -p mapping)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from fnmatch import fnmatch
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from support.package_checks import install_into_new_venv
from support.servers import free_port, wait_until_listening
from test_clients import readme_snippets

pytestmark = pytest.mark.slow


def is_ignored(relative: str, patterns: list[str]) -> bool:
    """.dockerignore, simplified: a pattern that matches the path or one of its folders excludes it
    (`**/` also matches zero folders)."""
    parts = relative.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(
        fnmatch(prefix, pattern) or (pattern.startswith("**/") and fnmatch(prefix, pattern[3:]))
        for prefix in prefixes
        for pattern in patterns
    )


@pytest.fixture(scope="module")
def build_context(petstore_package: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files `docker build` would send and COPY: the Dockerfile's COPY sources minus .dockerignore."""
    package = tmp_path_factory.mktemp("checkout") / "petstore"
    shutil.copytree(petstore_package, package)
    ignored = [
        line.strip()
        for line in (package / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    (package / "src" / "petstore" / "__pycache__").mkdir(exist_ok=True)  # must not be copied
    (package / "src" / "petstore" / "__pycache__" / "x.pyc").write_bytes(b"")
    context = tmp_path_factory.mktemp("image") / "app"
    context.mkdir()
    for line in (package / "Dockerfile").read_text().splitlines():
        if not line.startswith("COPY "):
            continue
        *sources, target = line.split()[1:]
        for source in sources:
            for path in [package / source, *(package / source).rglob("*")]:
                relative = str(path.relative_to(package))
                if path.is_dir() or is_ignored(relative, ignored):
                    continue
                destination = context / relative  # COPY a b ./ and COPY src ./src keep the relative paths
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, destination)
    assert not list(context.rglob("*.pyc"))
    return context


@pytest.fixture(scope="module")
def image_bin(build_context: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`RUN pip install .` in the build context, into a fresh venv; returns its bin folder."""
    return install_into_new_venv(tmp_path_factory.mktemp("image-venv"), ".", cwd=build_context)


async def check_server(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert len(tools) == 20
    order = await client.call_tool("get_order_by_id", {"orderId": 2})
    assert not order.is_error, order.content
    assert order.structured_content is not None and order.structured_content["status"] == "placed"


@pytest.mark.anyio
@pytest.mark.parametrize("client_name", ["Claude Desktop", "VS Code", "Cursor"])
async def test_client_snippet_starts_a_working_server(
    petstore_package: Path, image_bin: Path, prism_url: str, client_name: str
) -> None:
    _, text = readme_snippets((petstore_package / "README.md").read_text())[client_name]
    servers = json.loads(text)
    (entry,) = (servers.get("mcpServers") or servers["servers"]).values()
    env = {**entry["env"], "PETSTORE_BASE_URL": prism_url, "PATH": f"{image_bin}:{os.environ['PATH']}"}
    command = shutil.which(entry["command"], path=env["PATH"])
    assert command == str(image_bin / "petstore")  # the command the client runs is the installed script
    params = StdioServerParameters(command=command, args=entry["args"], env=env)
    async with Client(params, mode="legacy") as client:
        await check_server(client)


@pytest.mark.anyio
async def test_dockerfile_cmd_serves_streamable_http(petstore_package: Path, image_bin: Path, prism_url: str) -> None:
    dockerfile = (petstore_package / "Dockerfile").read_text()
    cmd = json.loads(dockerfile.split("\nCMD ", 1)[1].splitlines()[0])
    port = free_port()
    local = [{"0.0.0.0": "127.0.0.1", "8000": str(port)}.get(word, word) for word in cmd]
    env = {**os.environ, "PATH": f"{image_bin}:{os.environ['PATH']}", "PETSTORE_BASE_URL": prism_url}
    proc = subprocess.Popen(
        [str(image_bin / local[0]), *local[1:]], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        wait_until_listening(proc, port)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            await check_server(client)
    finally:
        proc.terminate()
        proc.wait(timeout=10)

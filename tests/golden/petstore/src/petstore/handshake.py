"""Start-up over stdio: answer the handshake at once while the MCP SDK loads in the background.

Importing the SDK takes most of a cold start, and a client's first requests need none of it: `initialize`
(protocol versions up to 2025-11-25), `server/discover` (2026-07-28) and `tools/list` have fixed answers,
which mcp-codegen serialized at generation time exactly as the SDK sends them (handshake.jsonl). `main()`
starts importing and building the server in a thread, answers those requests from the file, and hands
the connection to the SDK at the first message that needs it: the SDK then sees the conversation from
the start (`initialize` and the notifications before the hand-over are replayed to it, and its answer to
the replayed `initialize`, the same bytes, is not sent twice), so every later message is served exactly
as without this module.

The fast start is used only when the answers are known to be the SDK's own: no command-line arguments,
stdin and stdout pipes or sockets, the SDK version the answers were made with, and a request shaped as
this module checks it (anything else is handed over). Set `PETSTORE_FAST_START=0` to
always start through the SDK.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Any, cast

from .greeting import (
    MODERN,
    modern_envelope,
    plain_capabilities,
    plain_info,
    written_id,
)

PREFIX = "PETSTORE"
FORMAT = 1
HANDSHAKE = (
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
)  # the SDK's handshake-era versions
SURFACE = "tools"  # the surface handshake.jsonl lists
OPENER = "fast-start-opener"  # id of the server/discover replayed to open a 2026-07-28 connection in the SDK
MAX_LINE = 1 << 20  # a longer first message is handed to the SDK as it is
SWITCH_INTERVAL = (
    0.001  # seconds: the reading thread gets the interpreter soon while the SDK imports
)


def main(argv: Sequence[str] | None = None) -> None:
    """The console script and `python -m`: the fast start when it applies, else the server's own main."""
    args = sys.argv[1:] if argv is None else list(argv)
    answers = _answers(args, os.environ)
    if answers is None or not _settings_valid():
        from .cli import main as serve

        serve(argv)
        return
    start = FastStart(answers)
    del answers  # the fast start drops them at the hand-over (a large API's are megabytes)
    start.run()


def _pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _sdk_version(package: str, distribution: str, expected: str) -> bool:
    """Whether the `package` that `import` would find is `distribution` at version `expected`."""
    for entry in sys.path:
        folder = entry or "."
        if os.path.isdir(os.path.join(folder, package)):
            return os.path.isdir(
                os.path.join(folder, f"{distribution}-{expected}.dist-info")
            )
    return False


def _answers(
    args: Sequence[str], environ: Mapping[str, str], pipes: bool | None = None
) -> dict[str, bytes] | None:
    """The pre-serialized answers by name, or None when they may not be used for this start."""
    if (
        args
        or sys.platform == "win32"
        or environ.get(f"{PREFIX}_FAST_START", "1") == "0"
    ):
        return None
    if not (_pipe(0) and _pipe(1) if pipes is None else pipes):
        return None
    try:
        with open(
            os.path.join(os.path.dirname(__file__), "handshake.jsonl"), "rb"
        ) as handle:
            lines = handle.read().split(b"\n")
        header = json.loads(lines[0])
    except (OSError, ValueError):
        return None
    if (
        not isinstance(header, dict)
        or header.get("format") != FORMAT
        or not header.get("answers")
    ):
        return None
    if header.get("surface") != SURFACE:
        return None
    sdk = header.get("sdk")
    if not isinstance(sdk, dict):
        return None
    if not (
        _sdk_version("mcp", "mcp", str(sdk.get("mcp")))
        and _sdk_version("mcp_types", "mcp_types", str(sdk.get("mcp-types")))
    ):
        return None  # another SDK version may serialize differently
    names = header["answers"]
    if len(lines) < len(names) + 1:
        return None
    return dict(zip(names, lines[1:]))


def _settings_valid() -> bool:
    """Whether the environment's settings would start the server (else its own main reports them)."""
    import logging

    from .settings import Settings

    try:
        settings = Settings.from_env()
    except (SystemExit, ValueError):
        return False
    return settings.log_level in logging.getLevelNamesMapping()


class FastStart:
    """Serves the handshake from `answers` until a message needs the SDK, then hands the connection over."""

    def __init__(self, answers: dict[str, bytes]) -> None:
        self.answers = answers
        self.era: str | None = (
            None  # "handshake" after initialize, "modern" after a 2026-07-28 request
        )
        self.replay: list[bytes] = (
            []
        )  # lines the SDK must see first (initialize, notifications)
        self.sent: list[tuple[bytes, bytes]] = (
            []
        )  # (id, answer) of replayed requests: the SDK answers them again
        self.built: Any = None
        self.failure: BaseException | None = None
        self.loader = threading.Thread(
            target=self._load, name="sdk-import", daemon=True
        )

    def _load(self) -> None:
        """Import the server (and the SDK with it) and build it exactly as cli.main() does."""
        try:
            from . import cli, server

            args = cli.parse_args([])
            settings = cli.settings_from(args)
            cli.configure_logging(settings.log_level)
            self.built = server.build_server(settings)
            listing = self.built.get_request_handler("tools/list")
            if (
                listing is not None
            ):  # what the SDK path's tools/list also does: start compiling the checks
                import asyncio

                asyncio.run(listing.handler(cast(Any, None), cast(Any, None)))
        except BaseException as exc:  # reported by the main thread at the hand-over
            self.failure = exc

    def run(self) -> None:
        wire = (os.dup(0), os.dup(1))
        saved = (os.dup(0), os.dup(1))
        null = os.open(
            os.devnull, os.O_RDWR
        )  # while serving, stray reads and prints miss the wire (as the SDK does)
        os.dup2(null, 0)
        os.dup2(2, 1)
        os.close(null)
        interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL)
        self.loader.start()
        try:
            rest = self._serve(*wire)
            sys.setswitchinterval(interval)
            if rest is None:  # the client closed stdin during the handshake
                return
            self.loader.join()
            if self.failure is not None:
                raise self.failure
            handed, wire = wire, (-1, -1)
            self._hand_over(b"".join(self.replay) + rest, handed)
        finally:
            sys.setswitchinterval(interval)
            for fd, copy in enumerate(saved):
                os.dup2(copy, fd)
                os.close(copy)
            for fd in wire:
                if fd >= 0:
                    os.close(fd)

    def _serve(self, wire_in: int, wire_out: int) -> bytes | None:
        """Answer from `answers` until a message needs the SDK: the bytes it must read first (None: EOF)."""
        buffer = b""
        while True:
            end = buffer.find(b"\n")
            if end < 0:
                if len(buffer) > MAX_LINE:
                    return buffer
                chunk = os.read(wire_in, 1 << 16)
                if not chunk:
                    return None if not buffer.strip() else buffer
                buffer += chunk
                continue
            line, buffer = buffer[: end + 1], buffer[end + 1 :]
            if not line.strip():
                continue
            answer = self._answer(line)
            if answer is None:
                return line + buffer
            if answer:
                _write_all(wire_out, answer)

    def _answer(self, line: bytes) -> bytes | None:
        """The bytes to send for `line` (b"": nothing, kept for the SDK), or None: hand over."""
        try:
            message = json.loads(line, parse_constant=_no_constant)
        except (
            ValueError
        ):  # not JSON (or NaN, which the SDK's parser refuses): the SDK answers
            return None
        if (
            not isinstance(message, dict)
            or message.get("jsonrpc") != "2.0"
            or not set(message)
            <= {
                "jsonrpc",
                "id",
                "method",
                "params",
            }
        ):
            return None
        method = message.get("method")
        if (
            "id" not in message
        ):  # a notification: the SDK handles it after the hand-over, in order
            if not isinstance(method, str):
                return None
            self.replay.append(line)
            return b""
        request_id = written_id(message["id"])
        params = message.get("params")
        if request_id is None or not isinstance(method, str):
            return None
        if method == "initialize" and self.era is None:
            name = self._initialize(params)
            if name is None:
                return None
            self.era = "handshake"
            result = self.answers[name]
            self.replay.append(
                line
            )  # the SDK must see the handshake (its answer is not sent twice)
            self.sent.append((request_id, result))
        elif (
            method == "tools/list"
            and self.era == "handshake"
            and ("params" not in message or params == {})
        ):
            result = self.answers.get("tools/list handshake", b"")
        elif (
            method in ("server/discover", "tools/list")
            and self.era in (None, "modern")
            and modern_envelope(params)
        ):
            result = self.answers.get(f"{method} {MODERN}", b"")
            if (
                self.era is None and result
            ):  # the SDK must see a 2026-07-28 request first to serve this era too
                opener = {
                    "jsonrpc": "2.0",
                    "id": OPENER,
                    "method": "server/discover",
                    "params": params,
                }
                self.replay.append(json.dumps(opener).encode() + b"\n")
                self.sent.append(
                    (
                        b'"' + OPENER.encode() + b'"',
                        self.answers[f"server/discover {MODERN}"],
                    )
                )
            self.era = "modern"
        else:
            return None
        if not result:
            return None
        return b'{"jsonrpc":"2.0","id":' + request_id + b',"result":' + result + b"}\n"

    def _initialize(self, params: Any) -> str | None:
        """The answer's name for valid `initialize` params (the version negotiated as the SDK does)."""
        if not (
            isinstance(params, dict)
            and set(params) == {"protocolVersion", "capabilities", "clientInfo"}
            and isinstance(params["protocolVersion"], str)
            and plain_info(params["clientInfo"])
            and plain_capabilities(params["capabilities"])
        ):
            return None
        version = (
            params["protocolVersion"]
            if params["protocolVersion"] in HANDSHAKE
            else HANDSHAKE[-1]
        )
        name = f"initialize {version}"
        return name if name in self.answers else None

    def _hand_over(self, first: bytes, wire: tuple[int, int]) -> None:
        """Serve the rest through the SDK on `wire`: `first` (replayed and pending lines) is read before it."""
        built = self.built
        self.answers = {}  # not needed any more
        from importlib.util import find_spec

        import anyio
        from mcp.server.stdio import stdio_server

        from .stdio import event_loop_stdio

        async def serve() -> None:
            async with event_loop_stdio(first, self.sent, wire) as pipes:
                if pipes is None:
                    raise SystemExit("stdin and stdout are no longer pipes")
                stdin, stdout = pipes
                async with stdio_server(stdin, stdout) as (read, write):
                    await built.run(read, write, built.create_initialization_options())

        try:
            anyio.run(
                serve, backend_options={"use_uvloop": find_spec("uvloop") is not None}
            )
        except KeyboardInterrupt:
            pass


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]

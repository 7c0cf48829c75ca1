"""The one way spec text enters generated files: a Jinja filter per kind of place it lands in.

The spec is untrusted: its text must never become code, end a string early, or smuggle a line into a
comment, a Dockerfile or a TOML file. Templates therefore never put a spec value into output as is:

- `pystr` / `py`: a Python literal, built with repr (a str, or JSON-like data of str, int, bool, None,
  lists and dicts). repr escapes quotes, backslashes, control characters, U+2028/2029 and lone
  surrogates, so the literal always means the value itself.
- `doc`: text inside a docstring or a `#` comment, on one line: no line breaks, no control or format
  characters (NUL, ESC, bidirectional overrides, U+2028/2029), backslashes doubled, runs of double
  quotes turned into single quotes (so no triple quote can close the docstring).
- `toml`: a TOML basic string.
- `md` / `md_code`: one line of Markdown text (table cells escaped, HTML not opened) or a code span.
- `oneline`: plain text on one line without control characters (argparse help, Dockerfile comments).

Ordinary text (printable, one line, no quote runs) comes out of `doc`, `md` and `oneline` unchanged,
and `pystr` matches the double-quoted literal black would write, so output for ordinary specs does not
depend on this module. `safe_url` makes a server URL usable anywhere a URL is printed.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

# categories never written as is: control, format (bidi overrides, zero-width), surrogate, line/paragraph sep
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_QUOTE_RUN = re.compile(r'"{2,}')
# characters a printed URL never holds as is (besides unsafe categories and spaces): they are %-encoded
_URL_UNSAFE = frozenset('"`<>\\^{|}')


def oneline(value: object) -> str:
    """The text on one line: line breaks and tabs become spaces, other unsafe characters are dropped."""
    text = str(value)
    if text.isascii() and text.isprintable():  # nothing to change (the common case, character by character below)
        return text
    out = []
    for char in text:
        if char in "\r\n\t\v\f\x85\u2028\u2029":
            out.append(" ")
        elif unicodedata.category(char) not in _UNSAFE_CATEGORIES:
            out.append(char)
    return "".join(out)


def doc(value: object) -> str:
    """Text for a docstring or a comment line: one line, no escapes, no triple quote, no closing quote."""
    text = oneline(value).replace("\\", "\\\\")
    text = _QUOTE_RUN.sub(lambda m: "'" * len(m.group()), text)
    return text[:-1] + "'" if text.endswith('"') else text


def pystr(value: object) -> str:
    """A Python string literal for the value's text."""
    return repr(str(value))


def py(value: Any) -> str:
    """A Python literal for JSON-like data; anything else is a bug in the caller (ValueError)."""
    _check_literal(value)
    return repr(value)


def _check_literal(value: Any) -> None:
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no Python literal")
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            _check_literal(item)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"dict key {key!r} is not a string")
            _check_literal(item)
        return
    raise ValueError(f"{type(value).__name__} has no Python literal")


_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml(value: object) -> str:
    """A TOML basic string: quotes and backslashes escaped, control characters as \\uXXXX, no surrogates."""
    out = ['"']
    for char in str(value):
        code = ord(char)
        if char in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[char])
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")  # not a Unicode scalar value: TOML (and UTF-8) cannot hold it
        elif code < 0x20 or code == 0x7F or unicodedata.category(char) in _UNSAFE_CATEGORIES:
            out.append(f"\\u{code:04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def md(value: object) -> str:
    """One line of Markdown text: table separators escaped, no raw HTML opened."""
    return oneline(value).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")


def md_code(value: object) -> str:
    """A Markdown code span around the text, fenced with more backticks than it contains in a row."""
    text = oneline(value).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest or text.startswith(" ") or text.endswith(" ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def safe_url(url: str) -> str:
    """The URL on one line, without quotes or spaces: such characters are percent-encoded (UTF-8)."""
    out = []
    for char in url:
        if char in _URL_UNSAFE or char.isspace() or unicodedata.category(char) in _UNSAFE_CATEGORIES:
            out.append("".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass")))
        else:
            out.append(char)
    return "".join(out)


FILTERS: Mapping[str, Callable[..., str]] = {
    "pystr": pystr,
    "py": py,
    "doc": doc,
    "oneline": oneline,
    "toml": toml,
    "md": md,
    "md_code": md_code,
}

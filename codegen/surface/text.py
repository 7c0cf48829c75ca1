"""Tool text: the title and the description of a tool, built from the operation.

The title is verb-first (titles.py). The description says what the title does not, once: the summary
when the title did not come from it whole, the operation's description (HTML turned into Markdown, link
URLs dropped: prose.py), the failures that say more than their status, and "METHOD /path" only when
nothing else describes the operation. What the input schema says (argument descriptions, constraints,
examples) is not repeated here. `--compact` keeps the first paragraph of the description, cut at a
sentence, and no failures.
"""

from __future__ import annotations

import os
import re
from itertools import islice
from dataclasses import dataclass
from functools import lru_cache
from http import HTTPStatus

from ..spec.model import Operation, Response
from . import prose, titles

MAX_ERROR_TEXT = 120  # characters of each failure response's description in the tool description
COMPACT_TEXT = 300  # --compact: characters of the operation description kept in the tool description
# words of failure descriptions that say no more than the status code does
GENERIC_WORDS = frozenset(
    " ".join(status.phrase for status in HTTPStatus).lower().split()
    + """a an the or and of is was has been this that request response error errors resource resources object
    unexpected default generic failed failure invalid validation input server client endpoint spammed status
    code http problem details detail json returned occurred exceeded rate limit requires require authentication
    authorization missing permission permissions denied access credentials unavailable temporarily
    successful success successfully operation ok done completed""".split()
)


@dataclass(frozen=True, slots=True)
class ToolText:
    title: str
    description: str


def tool_text(op: Operation, name: str, compact: bool = False) -> ToolText:
    """The title and the description of the tool for `op`."""
    title, source = titles.title(op.summary, op.description, op.method, op.path, name)
    parts = ["Deprecated."] if op.deprecated else []
    summary = prose.clean(op.summary)
    if summary and not _repeats(summary, title) and not _within(summary, title):
        parts.append(summary)
    body = prose.clean(op.description) if op.description and op.description != op.summary else ""
    if body and source == "description":  # its first sentence is the title
        body = body[len(titles.first_sentence(op.description)) :].strip()
    elif body:  # a first sentence that says the title again ("Gets a thing." under "Get a thing")
        first, rest = _first_and_rest(body)
        if rest and (_repeats(first, title) or _within(first, title) or (summary and _repeats(first, summary))):
            body = rest
    if body and not any(p.location == "header" and p.name.lower() == "accept" for p in op.parameters):
        body = _without_media_type_lists(body)
    if body and _repeats(body, summary or title):
        body = ""
    if body and compact:
        first = next((p.strip() for p in body.split("\n\n") if p.strip()), "")
        body = prose.cut(first, COMPACT_TEXT)
    if body:
        parts.append(body)
    if not summary and not body and source in ("name", "path"):  # nothing says more than the route
        parts.append(f"{op.method} {op.path}")
    elif not body and not parts:  # many clients show a model the description, not the title: never empty
        parts.append(summary or f"{title}.")
    if not compact:
        failures = [failure(r) for r in op.responses if _is_failure(r) and not _generic(r)]
        if failures:
            parts.append(f"Errors: {'; '.join(failures)}.")
    return ToolText(title, "\n\n".join(parts))


def title(op: Operation, name: str) -> str:
    return titles.title(op.summary, op.description, op.method, op.path, name)[0]


def description(op: Operation, compact: bool = False) -> str:
    return tool_text(op, "", compact).description


MEDIA_TYPE_ITEM = re.compile(r"\s*[-*+]\s+(?:\*\*)?`?[a-z]+/[\w.+-]+`?(?:\*\*)?\s*:")
MEDIA_TYPE_LEAD = re.compile(r"(?:^|(?<=\s))[^.\n]*\bmedia types?\b[^.\n]*[.:]\s*$", re.IGNORECASE)


def _without_media_type_lists(body: str) -> str:
    """The description without lists of other media types the API can answer with (and the sentence that
    introduces such a list): the tool always asks for one media type, and offers no way to pick another."""
    paragraphs = body.split("\n\n")
    kept: list[str] = []
    for paragraph in paragraphs:
        lines = paragraph.split("\n")
        if lines and all(MEDIA_TYPE_ITEM.match(line) or line.startswith("  ") for line in lines):
            if kept and MEDIA_TYPE_LEAD.search(kept[-1]):
                kept[-1] = MEDIA_TYPE_LEAD.sub("", kept[-1]).strip()
                if not kept[-1]:
                    kept.pop()
            continue
        kept.append(paragraph)
    return "\n\n".join(kept)


WORD = re.compile(r"[a-z0-9]+")
SHORT = 300  # characters: _repeats reads all the words of a text this short (fewer calls than reading a few)


@lru_cache(maxsize=4096)  # pure; a tool's title and summary are read again by each comparison
def _words(text: str) -> tuple[str, ...]:
    return tuple(WORD.findall(text.lower()))


def _repeats(text: str, title: str) -> bool:
    """`text` says what `title` says (up to the verb's form and punctuation)."""
    said = _words(title)
    if len(text) <= SHORT:
        words = _words(text)
    else:  # a description: its words up to one more than the title has (then it says more)
        words = tuple(match.group() for match in islice(WORD.finditer(text.lower()), len(said) + 1))
    if words == said:
        return True
    if not words or len(words) != len(said) or words[1:] != said[1:]:
        return False
    first, other = words[0], said[0]  # the same verb in another form ("Finds" / "Find", "Updated" / "Update")
    common = len(os.path.commonprefix([first, other]))
    return common >= 3 and common >= min(len(first), len(other)) - 1


def _first_and_rest(body: str) -> tuple[str, str]:
    """The first sentence of `body` (with a closing quote or bracket after its end) and what follows it."""
    first = titles.first_sentence(body)
    if not body.startswith(first):
        return first, ""
    end = len(first) + len(body[len(first) :]) - len(body[len(first) :].lstrip("\"')]"))
    return body[:end], body[end:].strip()


def _within(text: str, title: str) -> bool:
    """Every word of `text` is in `title`, in order (its verb in any form; articles aside): "GitHub API Root"
    under "Get GitHub API Root", "Lists the caches for a repository." under "List caches for a repository"."""
    words = [w for w in _words(text) if w not in ("a", "an", "the")]
    said = [w for w in _words(title) if w not in ("a", "an", "the")]
    if words and said and words[0] != said[0] and titles.base_verb(words[0]) == titles.base_verb(said[0]) is not None:
        words = words[1:]
        said = said[1:]
    remaining = iter(said)
    return bool(words) and all(word in remaining for word in words)


def _is_failure(response: Response) -> bool:
    return response.status[:1] in "45" or response.status == "DEFAULT"


def _generic(response: Response) -> bool:
    """A failure whose description only restates its status ("Not Found", "Resource not found", "Error")."""
    return _generic_text(response.description)


@lru_cache(maxsize=4096)  # pure; a large API's operations share their failure responses
def _generic_text(description: str) -> bool:
    return all(word in GENERIC_WORDS or word.isdigit() for word in _words(prose.clean(description)))


def failure(response: Response) -> str:
    return _failure(response.status, response.description)


PHRASES = {str(status.value): status.phrase for status in HTTPStatus}


@lru_cache(maxsize=4096)
def _failure(status: str, description: str) -> str:
    text = " ".join(prose.clean(description).split())
    phrase = PHRASES.get(status, "Response")
    text = re.sub(rf"^(?:{re.escape(phrase)}|Response|Error)\s+(?=(?:if|when|unless|because)\b)", "", text, flags=re.I)
    text = prose.cut(text, MAX_ERROR_TEXT)  # "404 Not Found if the gist is not starred" -> "404 if the gist ..."
    return f"{'other' if status == 'DEFAULT' else status} {text}".strip().rstrip(".")

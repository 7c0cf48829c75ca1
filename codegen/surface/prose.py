"""Spec prose made ready for a model: HTML turned into Markdown, link URLs dropped, text cut at a sentence.

`to_markdown` converts with markdownify, and only when the text holds real HTML elements (a `List<String>`
or `a < b` in Markdown stays as it is). Markdown with a few inline tags is converted line by line, so its
paragraphs and lists keep their shape. `unlink` keeps a link's text and drops its URL (a model cannot open
it; the URL costs tokens, not meaning), and drops "For more information, see ..." sentences left pointing
nowhere. `cut` shortens text at the last sentence end that fits, else at a word, never inside a link or a
code span.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import Any

HTML_TAGS = (
    "a|abbr|b|blockquote|br|caption|code|dd|del|details|div|dl|dt|em|h[1-6]|hr|i|img|ins|kbd|li|mark|ol|p|pre|"
    "s|samp|small|span|strike|strong|sub|summary|sup|table|tbody|td|tfoot|th|thead|tr|tt|u|ul|var"
)
HTML_ELEMENT = re.compile(rf"</?(?:{HTML_TAGS})(?:\s[^<>]*)?/?>", re.IGNORECASE)
HTML_BLOCK_START = re.compile(r"\s*<(?:p|div|ul|ol|table|h[1-6]|pre|blockquote|dl|details)[\s>]", re.IGNORECASE)
LINK_TEXT = r"((?:[^\]\n]|\n(?!\n))*)"  # a link's text may wrap, but not across a paragraph
IMAGE = re.compile(rf"!\[{LINK_TEXT}\]\([^)\s]*(?:\s+\"[^\"\n]*\")?\)")
LINK = re.compile(rf"\[{LINK_TEXT}\]\([^)\s]*(?:\s+\"[^\"\n]*\")?\)")
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]\n]+\]:\s*\S+.*$\n?", re.MULTILINE)
# a sentence whose point is a link to documentation: "For more information, see [X](url)." / "See [X](url)."
_LINKED = r"\[(?:[^\]\n]|\n(?!\n))*\]\([^)\s]*\)"
SEE_ALSO = re.compile(
    r"(?<![^\s(])(?:For more (?:information|details)[^.\n\[]{0,60}?, see|See|Learn more(?: about)?|"
    rf"Read more(?: about)?)[^.\n\[]{{0,40}}?{_LINKED}(?:[^.\n\[]|\n(?!\n)|{_LINKED}){{0,120}}?\.\"?(?=\s|$)"
)
ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "approx", "incl", "no", "cf", "ex", "mr", "mrs", "dr"})
SENTENCE_END = re.compile(r"[.!?](?=[\"')\]]?(?:\s|$))|[。！？]")
CODE_SPAN = re.compile(r"`[^`\n]*`")
SPACES = re.compile(r"(?<=\S)[ \t]{2,}(?=\S)")
LINE_END_SPACES = re.compile(r"[ \t]+\n")
BLANK_LINES = re.compile(r"\n{3,}")
ELLIPSIS = "…"


@cache
def _converter_class() -> Any:
    """markdownify with a line break after <summary> (its text would run into the details otherwise); markdownify
    and BeautifulSoup are imported only for text that holds HTML (~0.15 s of a run without any)."""
    from markdownify import MarkdownConverter

    class _Converter(MarkdownConverter):
        def convert_summary(self, el: Any, text: str, parent_tags: Any) -> str:
            return f"{text.strip()}\n\n" if text.strip() else ""

    return _Converter


def _convert(html: str) -> str:
    converter = _converter_class()(
        escape_underscores=False,
        escape_asterisks=False,
        escape_misc=False,
        heading_style="ATX",
        bullets="-",
        strip=["script", "style"],
    )
    return str(converter.convert(html))


def has_html(text: str) -> bool:
    return HTML_ELEMENT.search(text) is not None


def to_markdown(text: str) -> str:
    """`text` with its HTML elements turned into Markdown; text without any is returned unchanged."""
    if not has_html(text):
        return text
    if HTML_BLOCK_START.match(text):  # an HTML document: converted whole
        return _tidy(_convert(text))
    lines = [_convert(line).strip() if has_html(line) else line for line in text.split("\n")]
    return _tidy(
        "\n".join(_indent_of(old) + new if has_html(old) else new for old, new in zip(text.split("\n"), lines))
    )


def _indent_of(line: str) -> str:
    """The indentation of a line (conversion strips it; nested list items need it)."""
    match = re.match(r"[ \t]*", line)
    return match.group(0) if match else ""


def _tidy(text: str) -> str:
    """Spaces at line ends dropped, three line breaks or more made two, the ends stripped."""
    if " \n" in text or "\t\n" in text:
        text = LINE_END_SPACES.sub("\n", text)
    if "\n\n\n" in text:
        text = BLANK_LINES.sub("\n\n", text)
    return text.strip()


def unlink(text: str) -> str:
    """Markdown links and images -> their text; reference definitions and bare "see the docs" sentences go."""
    if "](" not in text and "]:" not in text:
        return text
    if "see" in text or "See" in text or "Learn more" in text or "Read more" in text:  # what SEE_ALSO starts with
        text = SEE_ALSO.sub("", text)
    text = IMAGE.sub(r"\1", text)
    text = LINK.sub(r"\1", text)
    text = REFERENCE_DEFINITION.sub("", text)
    if "  " in text or "\t" in text:  # two spaces or tabs in a row (each regex below runs where it can match)
        text = SPACES.sub(" ", text)
    return _tidy(text)


@lru_cache(maxsize=16384)  # pure; a large API repeats its parameters' descriptions on thousands of operations
def clean(text: str) -> str:
    """Spec prose as a tool text carries it: Markdown, without link URLs."""
    return unlink(to_markdown(text)).strip()


def clean_schema(node: Any) -> Any:
    """`clean` applied to every `description` of a JSON Schema; keywords and values stay as they are."""
    if isinstance(node, list):
        return [clean_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "description" and isinstance(value, str):
            out[key] = clean(value)
        elif key in ("properties", "patternProperties", "$defs", "dependentSchemas") and isinstance(value, dict):
            out[key] = {k: clean_schema(v) for k, v in value.items()}
        elif isinstance(value, (dict, list)) and key not in ("enum", "const", "default", "examples", "required"):
            out[key] = clean_schema(value)
        else:
            out[key] = value
    return out


def _protected(text: str) -> list[tuple[int, int]]:
    """Spans a cut must not fall inside: links, code spans, bare URLs."""
    spans = [m.span() for m in LINK.finditer(text)]
    spans += [m.span() for m in CODE_SPAN.finditer(text)]
    spans += [m.span() for m in re.finditer(r"https?://\S+", text)]
    return spans


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start < position < end for start, end in spans)


def _is_sentence_end(text: str, match: re.Match[str]) -> bool:
    if match.group(0) != ".":
        return True
    word = re.search(r"(\S+)\.$", text[: match.end()])
    return not (word and (word.group(1).lower() in ABBREVIATIONS or len(word.group(1)) == 1))


def cut(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters; else its longest start that ends a sentence (and fits), or,
    when no sentence ends in time, the longest start that ends a word, with "…". Never inside a link, a code
    span or a URL; a text with no such place before `limit` is cut at the first one after it."""
    text = text.strip()
    if len(text) <= limit:
        return text
    spans = _protected(text)
    ends = [
        m.end()
        for m in SENTENCE_END.finditer(text)
        if not _inside(m.end(), spans) and _is_sentence_end(text, m) and m.end() < len(text)
    ]
    fitting = [end for end in ends if end <= limit]
    if fitting and fitting[-1] >= limit // 3:
        return text[: fitting[-1]].rstrip()
    words = [m.start() for m in re.finditer(r"\s+", text) if not _inside(m.start(), spans)]
    before = [w for w in words if w <= limit - len(ELLIPSIS)]
    if before and before[-1] > 0:
        return text[: before[-1]].rstrip(" ,;:-–—(") + ELLIPSIS
    if fitting:
        return text[: fitting[-1]].rstrip()
    after = [w for w in words + ends if w > limit]
    return text if not after else text[: min(after)].rstrip() + ELLIPSIS

"""Verb-first tool titles, built from the summary, the method and the path.

A summary that already starts with a verb is kept ("Create an issue"); a third-person verb becomes the
imperative ("Returns pets" -> "Return pets"). A summary that is a noun phrase gets the method's verb in
front ("Historic aggregates" on GET -> "Get historic aggregates"). Without a usable summary the title is
made from the method and the path: `POST /v1/charges` -> "Create a charge", `GET /v1/charges/{charge}` ->
"Get a charge", `POST /v1/charges/{charge}/capture` -> "Capture a charge", `GET
/v1/customers/{customer}/sources` -> "List sources of a customer".
"""

from __future__ import annotations

import re

from . import naming, prose

MAX_TITLE = 120  # characters: a longer summary's first sentence is used, else the path makes the title
VERBS = frozenset("""
    abort accept acknowledge activate add advance allow analyze annotate append apply approve archive assign associate
    attach authenticate authorize award ban batch block book bookmark browse build bulk calculate call cancel
    capture change charge check checkout claim classify clear clone close collect commit compare complete
    compute configure confirm connect consent convert copy count create deactivate decline decrypt delete
    deliver deny deploy describe detach detect disable disassociate disconnect dismiss display download
    duplicate edit enable encrypt end enqueue enroll ensure enumerate estimate evaluate execute expire export
    exchange extend extract fail fetch filter finalize find finish fire flag flush follow fork forward generate get give grant
    hide hold identify import increment index initiate insert install invalidate invite invoke issue join
    launch leave link list load lock log login logout look lookup make manage mark merge migrate mint modify
    move mute notify obtain open order patch pause pay perform pin ping place poll post present preview print process record
    promote provision publish purchase purge push put query queue read reactivate rebuild receive recover
    redact redeem redeliver redirect refresh refund regenerate register reject release reload remove rename
    render renew reopen reorder replace reply report request rerequest rerun resend reserve reset resolve
    restart restore resume retrieve retry return reverse review revoke rollback rotate run save scan schedule
    search select send set setup share show sign simulate skip sort split star start stop stream submit
    subscribe succeed suspend swap sync tag terminate test toggle track trade transfer transform translate trash
    trigger unarchive unassign unban unblock undo unfollow uninstall unlink unlock unmute unpin unpublish
    unregister unset unstar unsubscribe unsuspend untrash update upgrade upload upsert use validate verify view
    void vote watch withdraw write
    """.split())
DETERMINERS = frozenset("a an the all any each every one some multiple many this these that those my your".split())
EXTENSION = re.compile(r"\.(?:json|xml|ya?ml|csv|txt|html?)$", re.IGNORECASE)  # /Accounts/{Sid}.json
VERSION = re.compile(r"v\d+(?:\.\d+)*|api|rest", re.IGNORECASE)
STATUS_PREFIX = re.compile(r"^\((?:deprecated|beta|preview)\)\s*", re.IGNORECASE)
QUERY_OR_FRAGMENT = re.compile(r"[?#]")
CUSTOM_METHOD = re.compile(r"(?<=[^/:]):?(?=:[A-Za-z])")


def base_verb(word: str) -> str | None:
    """The imperative of `word` when it is a known verb in that form, the third person or the past, else None."""
    low = word.lower().replace("-", "")
    if low in VERBS or (low.endswith(("ize", "ise", "ify")) and len(low) > 6):
        return low
    for suffix, replacement in (("ies", "y"), ("es", ""), ("s", ""), ("ied", "y"), ("ed", ""), ("d", "")):
        if low.endswith(suffix) and low[: -len(suffix)] + replacement in VERBS:
            return low[: -len(suffix)] + replacement
    return None


def from_summary(summary: str, method: str, path: str, strict_noun: bool = True) -> str | None:
    """A verb-first title from the summary, or None when the summary cannot make one (empty, too long, a
    sentence about something else). `strict_noun` False: a noun phrase gives None too (for description
    sentences, which are titles only when they start with a verb)."""
    text = prose.clean(summary).split("\n")[0].strip()
    text = STATUS_PREFIX.sub("", text)
    if len(text) > MAX_TITLE:
        first = prose.cut(text, MAX_TITLE)
        if first.endswith(prose.ELLIPSIS) or len(first) > MAX_TITLE:
            return None
        text = first
    text = text.rstrip(". ").strip()
    if not text:
        return None
    head, sep, tail = text.partition(" - ")  # "Math - Calculate absolute": a category, then the title
    if sep and tail and base_verb(tail.split()[0]) is not None:
        text = tail
    words = text.split()
    verb = base_verb(words[0])
    if verb is not None:
        return " ".join([verb.capitalize(), *words[1:]])
    if any(w.lower() in ("a", "an", "the") for w in words[1:3]):  # "Force cancel a run": unknown verb(s)
        return text[0].upper() + text[1:]
    if words[0].lower() in DETERMINERS or len(words) > 8:  # "The API returns ...": a sentence, not a name
        return None
    if not strict_noun:
        return None
    noun = text if _keeps_case(words[0]) else text[0].lower() + text[1:]
    return f"{_noun_verb(method, path)} {noun}"


def _keeps_case(word: str) -> bool:
    """An acronym or a product name (IP, GitHub, iOS): its capitals are part of it."""
    return sum(c.isupper() for c in word) > 1 or (len(word) > 1 and word[0].islower() and word[1:].isupper())


def _noun_verb(method: str, path: str) -> str:
    if method in ("GET", "HEAD"):
        return "Get"
    if method == "DELETE":
        return "Delete"
    if method in ("PUT", "PATCH"):
        return "Update"
    last = _segments(path)[-1:] or [""]
    return "Create" if last[0] and not last[0].startswith("{") and last[0].lower().endswith("s") else "Send"


def _route(path: str) -> list[str]:
    """The path's segments, without a query or fragment (`/?Action=X`, `/#X-Amz-Target=Y`) or file extension;
    a custom method (`/v1/{name}:encrypt`) is a segment of its own."""
    path = QUERY_OR_FRAGMENT.split(path, maxsplit=1)[0]
    segments = [EXTENSION.sub("", s) for s in path.split("/")]
    return [p for s in segments for p in CUSTOM_METHOD.split(s) if p]


def _segments(path: str) -> list[str]:
    """The path's segments without version prefixes; dotted RPC names (`/chat.postMessage`) split too."""
    return [p for s in _route(path) for p in _split_dots(s) if not VERSION.fullmatch(p)]


def _split_dots(segment: str) -> list[str]:
    return [segment] if segment.startswith("{") or "." not in segment else [p for p in segment.split(".") if p]


def is_rpc(path: str) -> bool:
    """`/chat.postMessage`, `/admin.users.list`, `/v1/{name}:encrypt`: method names, not resources."""
    return any(("." in s or s.startswith(":")) and not s.startswith("{") for s in _route(path))


def _words(segment: str) -> list[str]:
    return [w.lower() for w in naming.snake_case(segment).split("_") if w]


IRREGULAR = {"people": "person", "children": "child", "men": "man", "women": "woman", "data": "data", "media": "media"}


def singular(word: str) -> str:
    low = word.lower()
    if low in IRREGULAR:
        return IRREGULAR[low]
    if low.endswith("ies") and len(low) > 4:
        return word[:-3] + "y"
    if low.endswith(("sses", "ches", "shes", "xes", "zzes")):
        return word[:-2]
    if low.endswith("s") and not low.endswith(("ss", "us", "is", "news")):
        return word[:-1]
    return word


def _a(words: list[str]) -> str:
    text = " ".join(words)
    return ("an " if text[:1] in "aeio" else "a ") + text


def _plain(segment: str) -> bool:
    return not segment.startswith("{")


def from_path(method: str, path: str) -> str | None:
    """A verb-first title from the method and path alone, or None when the path names nothing."""
    segs = _segments(path)
    action: list[str] = []
    if segs and segs[-1].startswith(":"):  # a custom method, /v1/{name}:encrypt: always the action
        action, segs = _words(segs[-1][1:]), segs[:-1]
        if not action:
            return None
    elif len(segs) > 1 and _plain(segs[-1]):
        words = _words(segs[-1])
        rpc = is_rpc(path)  # /admin.users.setOwner: the last name is the action, whatever follows the verb
        if words and words[0] in VERBS and (rpc or singular(words[-1]) == words[-1]):  # /capture, /refund_payment
            action, segs = words, segs[:-1]
    item = bool(segs) and not _plain(segs[-1])
    at = len(segs) - 2 if item else len(segs) - 1
    if at < 0 or not _plain(segs[at]) or not _words(segs[at]):
        return " ".join(action).capitalize() if action else None
    resource = _words(segs[at])
    if at >= 1 and _plain(segs[at - 1]):  # a namespace: /issuing/cards, /billing_portal/sessions
        resource = _words(segs[at - 1]) + resource
    owner = None
    if at >= 2 and not _plain(segs[at - 1]) and _plain(segs[at - 2]) and _words(segs[at - 2]):
        words = _words(segs[at - 2])
        owner = [*words[:-1], singular(words[-1])]
    one = [*resource[:-1], singular(resource[-1])]
    plural = one != resource
    named = _a(one) if item else " ".join(resource)
    if action:
        rest = " ".join(action[1:])
        title = f"{action[0].capitalize()} {rest + ' of ' if rest else ''}{named}"
    elif method in ("GET", "HEAD"):
        title = f"{'List' if plural and not item else 'Get'} {named}"
    elif method == "POST":
        title = f"Create {_a(one)}" if plural and not item else f"{'Update' if item or owner else 'Create'} {named}"
    elif method in ("PUT", "PATCH"):
        title = f"Update {named}"
    elif method == "DELETE":
        title = f"Delete {named}"
    else:
        title = f"{method.capitalize()} {named}"
    return f"{title} of {_a(owner)}" if owner else title


def first_sentence(description: str) -> str:
    text = prose.clean(description).split("\n")[0].strip()
    end = prose.SENTENCE_END.search(text)
    return text[: end.end()] if end else text


def title(summary: str, description: str, method: str, path: str, name: str) -> tuple[str, str]:
    """The tool's title and where it came from ("summary", "description", "path" or "name"): the summary
    when it makes a good title; else the method and path of a resource path; else the description's first
    sentence when it starts with a verb; else the method and an RPC path; else the tool name in words."""
    made = from_summary(summary, method, path) if summary.strip() else None
    if made:
        return made, "summary"
    made = None if is_rpc(path) else from_path(method, path)
    if made:
        return made, "path"
    sentence = first_sentence(description) if description.strip() else ""
    made = from_summary(sentence, method, path, strict_noun=False) if sentence and len(sentence) <= MAX_TITLE else None
    if made:
        return made, "description"
    made = from_path(method, path)
    if made:
        return made, "path"
    return naming.snake_case(name).replace("_", " ").capitalize(), "name"

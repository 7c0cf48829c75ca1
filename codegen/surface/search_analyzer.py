"""Text -> stems, for the search index (search_index.py) and for queries: words (markup left out, camelCase split,
lower case), stop words dropped, each word stemmed with the Snowball English stemmer and numbered once. The
generated search.py analyzes a query exactly the same way (tested). Also the words a user says for what an HTTP
method does, which the index and the intent of a query share."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from itertools import chain
from typing import Any

from .search_action import PHRASAL, QUESTIONS, action_stems, query_actions
from .search_query import AFTER_PASSIVE, ASKING, FILLERS, NEUTRAL, OBJECTS, PASSIVE, READ_OPENERS, TELLING, Hints, Value
from .search_query import first_words, intent, joined_words, value_kinds, values, without_names

# The words a user says for what an HTTP method does (search_index.METHOD_WORDS, by the shape of the path).
READ_ONE = "get show retrieve read view fetch see look open describe detail info what which who whose"
READ_MANY = "list all every show find search browse see look which what who how many count history recent"
CREATE = "create add new make start register post publish write submit generate set up open"
CHANGE = "update change edit modify rename set fix switch adjust replace mark toggle enable disable"
REMOVE = "delete remove cancel destroy revoke drop erase discard clear unset purge rid"

# English words that carry no meaning for ranking (kept out of the index, so they never match): function
# words, the fillers of a request ("please", "I want") and the words that introduce a value ("a team called
# platform"). Not the words that say what to do or whose (what, which, who, all, any, new, now, up, out, off,
# my: the method's words and the thesaurus use them).
STOPWORDS = frozenset(
    """a about above after against also am an and are as at be because been before being below both but by called
    can could did do does doing during each few for from further has have having he her here hers him his how i
    if in into is it its just let me more most named need nor of on once only or other our ours please same
    should so some such than that the their theirs them then there these they this those titled to too us
    very want was we were when where while whom why will with would you your yours""".split()
)

_TAG = re.compile(r"<[^>]{0,200}>")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")  # where a camelCase word is split: search.py's
# `([a-z0-9])([A-Z])` -> `\1 \2`, as one space (no template to expand per match)
_WORD = re.compile(r"[^\W_]+")
DROPPED = -1  # the number of a word that is not indexed (one letter, a stopword)
_KEPT = DROPPED.__ne__


def split_words(text: str) -> list[str]:
    """The words of `text` (lower case), markup left out and camelCase split."""
    return _WORD.findall(_CAMEL.sub(" ", strip_markup(text)).lower())


def stemmer() -> Any:
    """The English Snowball stemmer (PyStemmer's C one when installed: it is); imported only where a search index is
    built."""
    import snowballstemmer

    return snowballstemmer.stemmer("english")


class _Memo(dict[str, Any]):
    """text -> what `make` gives for it, computed on the first lookup (`memo[text]`, also through `map`)."""

    def __init__(self, make: Callable[[str], Any]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, text: str) -> Any:
        value = self[text] = self._make(text)
        return value


class Analyzer:
    """Text -> stems. The generated search.py does exactly the same to a query (tested).

    Each distinct text is analyzed once, and each distinct word stemmed once; `ids` numbers its stems in
    `vocabulary` (shared by all the texts, with "" as 0: an empty document's token), which the BM25 weights are
    computed from."""

    def __init__(self) -> None:
        self._stemmer = stemmer()
        self.vocabulary: dict[str, int] = {"": 0}
        self._names = [""]  # stem id -> stem
        # text -> its stems' ids, and the same of each piece between spaces and of each word (DROPPED when the word
        # is not indexed): a large API repeats its texts, and their pieces repeat more (no memo refers back to the
        # analyzer: no reference cycle keeps them once it is gone, with the collector off)
        words = _Memo(partial(_word_number, self._stemmer.stemWord, self.vocabulary, self._names))
        self._ids = _Memo(partial(_text_ids, _Memo(partial(_piece_ids, words))))
        self._stemmed = _Memo(partial(_text_stems, self._ids, self._names))
        self._intent: dict[str, Any] | None = None

    def words(self, text: str) -> list[str]:
        return [w for w in split_words(text) if len(w) > 1 and w not in STOPWORDS]

    def stems(self, text: str) -> list[str]:
        return list(self._stemmed[text])

    def every(self, text: str) -> list[str]:
        """The stems of all the words of `text`, stop words too (quoted thesaurus phrases are matched on these)."""
        return [self._stemmer.stemWord(w) for w in split_words(text) if len(w) > 1]

    def stemmed(self, text: str) -> tuple[str, ...]:
        return self._stemmed[text]  # type: ignore[no-any-return]

    def ids(self, text: str) -> tuple[int, ...]:
        """The stems of `text` as their numbers in `vocabulary`."""
        return self._ids[text]  # type: ignore[no-any-return]

    def all_ids(self, texts: Iterable[str]) -> list[tuple[int, ...]]:
        """`ids` of each text."""
        return list(map(self._ids.__getitem__, texts))

    def query(self, text: str) -> list[str]:
        """A query's stems: its words' (without the names it gives), its hyphenated words' written as one, then
        the kind of each value it quotes (search_query)."""
        extra = joined_words(text) + value_kinds(text)
        return self.stems(without_names(text)) + [stem for word in extra for stem in self.stems(word)]

    def hints(self, text: str, words: Mapping[str, Any] | None = None) -> Hints:
        """Whether the query reads or changes, and the values it points at (search_query.Hints). `words`: the
        index's "intent" (search.json's: with the API's own verbs), else the words of any API."""
        found = []
        for before, prefix in values(text):
            named: list[str] = []
            for word in before:  # nearest first, up to a word that says nothing ("on issue 42": issue)
                stems = self.stems(word)
                if not stems:
                    break
                named.append(stems[0])
            if named or prefix:
                found.append(Value(tuple(named), prefix or ""))
        words = words or self.intent_words()
        stem = self._stemmer.stemWord
        actions = query_actions(first_words(text, words), words, stem)
        sequence = tuple(self.every(without_names(text)))
        return Hints(intent(text, words, stem), tuple(found), frozenset(actions), sequence)

    def intent_words(self, verbs: Sequence[str] = ()) -> dict[str, Any]:
        """The words search_query.intent reads, as search.json ships them: the stems of the first words of a
        request that reads or changes (with the API's `verbs`, the first words of its summaries, that do not
        read: merge, follow, assign), the fillers before them, the determiners that say neither, the words
        after "how" and before "me" that matter, and the pronouns that may follow a verb."""
        if self._intent is None:
            stem = self._stemmer.stemWord
            reading = {stem(w) for w in (set(READ_OPENERS) | set(f"{READ_ONE} {READ_MANY}".split())) - {"open"}}
            changing = {stem(w) for w in f"{CREATE} {CHANGE} {REMOVE}".split()} - reading  # open a PR: creates
            self._intent = {
                "read": sorted(reading),
                "change": sorted(changing),
                "fillers": sorted(FILLERS),
                "neutral": sorted(NEUTRAL),
                "asking": sorted(ASKING),
                "telling": sorted(TELLING),
                "objects": sorted(OBJECTS),
                "passive": sorted(PASSIVE),
                "after": sorted(AFTER_PASSIVE),
                "actions": action_stems(self.stems),
                "phrasal": dict(sorted(PHRASAL.items())),
                "questions": sorted(QUESTIONS),
            }
        words = {word.lower() for word in verbs if word.isalpha()} - set(FILLERS) - set(NEUTRAL)
        said = {s for word in words for s in self.stems(word)} - set(self._intent["read"])
        return {**self._intent, "change": sorted(set(self._intent["change"]) | said)} if said else self._intent


def _text_ids(pieces: Mapping[str, tuple[int, ...]], text: str) -> tuple[int, ...]:
    """The ids of the stems of `split_words(text)`, piece by piece: no word, camelCase split or lower-casing spans
    whitespace (the markup it strips can: it is stripped from the whole text)."""
    return tuple(chain.from_iterable(map(pieces.__getitem__, strip_markup(text).split())))


def _piece_ids(words: Mapping[str, int], piece: str) -> tuple[int, ...]:
    return tuple(filter(_KEPT, map(words.__getitem__, _WORD.findall(_CAMEL.sub(" ", piece).lower()))))


def _text_stems(ids: Mapping[str, tuple[int, ...]], names: list[str], text: str) -> tuple[str, ...]:
    return tuple(map(names.__getitem__, ids[text]))


def _word_number(stem: Callable[[str], str], vocabulary: dict[str, int], names: list[str], word: str) -> int:
    """The id of the stem of `word` (numbered in `vocabulary` and `names` when new), DROPPED when not indexed."""
    if len(word) < 2 or word in STOPWORDS:
        return DROPPED
    found = stem(word)
    number = vocabulary.get(found)
    if number is None:
        number = vocabulary[found] = len(names)
        names.append(found)
    return number


def strip_markup(text: str) -> str:
    return _TAG.sub(" ", text) if "<" in text else text

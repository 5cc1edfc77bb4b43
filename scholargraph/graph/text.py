"""Shared tokenisation for the text features: lower-cased alphabetic words and a scholarly stop-word list."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

# Words every abstract uses whatever its field: they would otherwise top every topic.
SCHOLARLY_STOPWORDS = frozenset("""
paper papers article articles work works study studies studied research propose proposed proposes proposing
proposal present presents presented presenting show shows shown showed showing result results resulting
approach approaches method methods methodology technique techniques based use used uses using usage novel new
problem problems demonstrate demonstrates demonstrated experiment experiments experimental evaluate evaluated
investigate investigates investigated describe describes described introduce introduces introduced address
addresses addressed provide provides provided achieve achieves achieved significant significantly effective
effectively effectiveness efficient efficiently existing previous recent recently state art able aim aims
abstract conclusion conclusions finally furthermore moreover respectively particular particularly various
different important including include includes given consider considered et al
""".split())


@cache
def _gensim_word_lists() -> dict[str, frozenset[str]]:
    # Read on first use, not at import: importing gensim takes half a second (scipy.stats), which every
    # interactive command would pay even when it never tokenises.
    from gensim.models.phrases import ENGLISH_CONNECTOR_WORDS
    from gensim.parsing.preprocessing import STOPWORDS as GENSIM_STOPWORDS

    return {
        # gensim's English stop words and the scholarly boilerplate above
        "STOPWORDS": frozenset(GENSIM_STOPWORDS) | SCHOLARLY_STOPWORDS,
        # Function words allowed inside a phrase ("state_of_the_art"), never at its ends: gensim's English list.
        "CONNECTOR_WORDS": frozenset(ENGLISH_CONNECTOR_WORDS),
    }


def __getattr__(name: str) -> frozenset[str]:
    # STOPWORDS and CONNECTOR_WORDS, built on first access (PEP 562)
    lists = _gensim_word_lists()
    if name in lists:
        return lists[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


MIN_LEN = 2
MAX_LEN = 40

# Letters only (any script): digits, underscores and punctuation split words, so "k-means" gives "k",
# "means" and "3d" gives "d" (both dropped or stop words), and "_" stays free to join phrases.
_WORD = re.compile(r"[^\W\d_]+")


def words(text: str | None) -> list[str]:
    """Lower-cased alphabetic words of `text` of MIN_LEN..MAX_LEN letters, stop words kept (phrase
    detection needs them to see which words are really adjacent)."""
    if not text:
        return []
    return [w for w in _WORD.findall(text.lower()) if MIN_LEN <= len(w) <= MAX_LEN]


def is_content(token: str, stopwords: frozenset[str] | None = None) -> bool:
    """A token worth keeping: a word not in `stopwords`, or a phrase ("neural_network") whose first and
    last words are not stop words (connector words may sit inside it); `stopwords` defaults to STOPWORDS."""
    if stopwords is None:
        stopwords = _gensim_word_lists()["STOPWORDS"]
    if "_" not in token:
        return token not in stopwords
    parts = token.split("_")
    return parts[0] not in stopwords and parts[-1] not in stopwords


def drop_stopwords(tokens: Iterable[str], stopwords: frozenset[str] | None = None) -> list[str]:
    stop = _gensim_word_lists()["STOPWORDS"] if stopwords is None else stopwords
    return [t for t in tokens if is_content(t, stop)]


def tokenize(text: str | None, stopwords: frozenset[str] | None = None) -> list[str]:
    """`words(text)` without stop words: the bag-of-words tokens of a title or abstract."""
    return drop_stopwords(words(text), stopwords)

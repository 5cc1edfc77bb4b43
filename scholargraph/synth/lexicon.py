"""The world's words: stop and general words, pseudo-word topic terms and concept names, people and places."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

_STOP = ("the of and a in to is for that with on by as we this are an from be which these our its at it can "
         "their or both than into such each also not under two over between how when where while all").split()
_GENERAL = list(dict.fromkeys((
    "method methods results analysis approach model models data study performance framework evaluation "
    "experiments propose present show novel new based using problem problems paper work effect effects "
    "significant improve improved efficient structure process large small high low set different several "
    "various existing previous recent general specific important case cases order terms time number function "
    "properties system systems technique techniques application applications theory practical empirical "
    "simulation measure measures estimate observed demonstrate compare compared provide investigate describe "
    "derive obtain obtained consider result evidence range level levels rate quality standard common complex "
    "simple robust accurate").split()))
_FIELDS = ("Dynamics", "Theory", "Systems", "Analysis", "Networks", "Mechanics", "Inference", "Design",
           "Chemistry", "Informatics", "Engineering", "Modelling", "Computing", "Physics", "Biology",
           "Statistics", "Studies", "Methods", "Sciences", "Optimization")
_ONSETS = ("b c d f g h k l m n p r s t v z b d l m n r s t br cr dr fr gr pr tr bl cl fl gl pl sl st sp "
           "sc th ch sh").split()
_VOWELS = "a e i o u a e i o a e o ai ou ei ia".split()
_CODAS = "- - - - - - n r l s m t x".split()
_TERM_SUFFIXES = "- - - ic ics ation ity al ism ance ose ase on ine ide ure ent ar or ous ion".split()
_NAME_SUFFIXES = "- - - son ova elli ez sen ura ian berg ski ani er ov in".split()
SAFE = re.compile(r"^[A-Za-z][A-Za-z .-]*$")  # what lets records be written as JSON by string building


def _dash(s: str) -> str:
    return "" if s == "-" else s


def _pseudo_words(rng: np.random.Generator, n: int, taken: set[str], syllables: tuple[int, int],
                  suffixes: tuple[str, ...] | list[str], min_len: int = 4, max_len: int = 13) -> list[str]:
    """`n` distinct pronounceable pseudo-words (consonant-vowel syllables plus a suffix), none in `taken`."""
    out: list[str] = []
    codas = [c for c in _CODAS if c != "-"]
    while len(out) < n:
        k = int(rng.integers(syllables[0], syllables[1] + 1))
        word = "".join(_ONSETS[int(rng.integers(len(_ONSETS)))] + _VOWELS[int(rng.integers(len(_VOWELS)))]
                       for _ in range(k))
        suffix = _dash(suffixes[int(rng.integers(len(suffixes)))])
        if suffix[:1] in "aeiouy" and suffix:
            word += codas[int(rng.integers(len(codas)))]  # no vowel pile-up before a vowel suffix
        else:
            word += _dash(_CODAS[int(rng.integers(len(_CODAS)))])
        word += suffix
        if min_len <= len(word) <= max_len and word not in taken:
            taken.add(word)
            out.append(word)
    return out


@dataclass
class Vocab:
    """All words of the world and the string tables texts are assembled from."""

    stop: list[str]
    general: list[str]
    core: list[list[str]]  # per topic
    concepts: list[list[tuple[str, str, str]]]  # per topic: (traditional, modern, neighbour-field) names
    topic_names: list[str]
    words: list[str]  # global word table: stop, general, then per topic core + 3 forms per concept
    topic_base: np.ndarray  # global id of each topic's first word

    @property
    def per_topic(self) -> int:
        return len(self.core[0]) + 3 * len(self.concepts[0])


def build_vocab(rng: np.random.Generator, topics: int, core_terms: int, concepts: int) -> Vocab:
    taken = set(_STOP) | set(_GENERAL)
    core, conc, names = [], [], []
    for t in range(topics):
        words = _pseudo_words(rng, core_terms + 3 * concepts, taken, (2, 3), _TERM_SUFFIXES, 5, 11)
        core.append(words[:core_terms])
        rest = words[core_terms:]
        conc.append([(rest[3 * c], rest[3 * c + 1], rest[3 * c + 2]) for c in range(concepts)])
        names.append(f"{core[-1][0].capitalize()} {_FIELDS[t % len(_FIELDS)]}")
    words = list(_STOP) + list(_GENERAL)
    base = []
    for t in range(topics):
        base.append(len(words))
        words.extend(core[t])
        for triple in conc[t]:
            words.extend(triple)
    return Vocab(list(_STOP), list(_GENERAL), core, conc, names, words, np.array(base, dtype=np.int64))


@dataclass
class Names:
    given: list[str]
    surnames: list[str]
    orgs: list[str]


def build_names(rng: np.random.Generator, n_orgs: int, taken: set[str]) -> Names:
    given = [w.capitalize() for w in _pseudo_words(rng, 400, taken, (2, 2), ("-",), 3, 8)]
    surnames = [w.capitalize() for w in _pseudo_words(rng, 6000, taken, (1, 3), _NAME_SUFFIXES, 4, 12)]
    place_suffixes = ("-", "-", "ia", "ton", "burg")
    places = [w.capitalize() for w in _pseudo_words(rng, n_orgs, taken, (2, 3), place_suffixes)]
    shapes = ("University of {}", "{} Institute of Technology", "{} State University", "{} Research Centre",
              "University of {}", "{} University")
    orgs = [shapes[int(rng.integers(len(shapes)))].format(p) for p in places]
    return Names(given, surnames, orgs)

"""Person names as blocking and comparison see them: a surname key and given-name parts, from a name as a
source writes it. `block_key` groups the occurrences that may be one person (surname and first initial);
`compatible` says whether two names inside a block may be (`A.` fits `A.A.` and `Arkady A.`; `Arkady` never
fits `Alexander`). Pure: no store, no model.

Handled: `Given Surname` and `Surname, Given` (BibTeX); accents and ligatures (`Müller` = `Muller`, `Søren` =
`Soren`, `Straße` = `Strasse`); particles kept with the surname (`van der Waals`, `de la Cruz`); initials with or
without dots and spaces (`A.A.Tseytlin`, `A. A. Tseytlin`); hyphenated given names as two parts (`J.-B. Zuber`
= `Jean-Bernard Zuber`). Not handled: scripts other than Latin (a name with no Latin letter gives no key), and
nicknames (`Bob` for `Robert`)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Letters that NFKD does not decompose into a base letter and a mark.
_FOLD = str.maketrans({"ß": "ss", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ø": "o", "Ø": "O", "ł": "l",
                       "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "þ": "th", "ı": "i"})
PARTICLES = frozenset({"van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "dos", "das", "le",
                       "la", "ten", "ter", "af", "zu", "y"})
_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})


# LaTeX letters (`\\o`, `\\ss`, the dotless `\\i` of `\\'{\\i}`); other commands are accents and go.
_LATEX_LETTERS = {"ss": "ss", "ae": "ae", "AE": "AE", "oe": "oe", "OE": "OE", "aa": "a", "AA": "A", "o": "o",
                  "O": "O", "l": "l", "L": "L", "i": "i", "j": "j"}


def strip_latex(text: str) -> str:
    """`Par\\'{\\i}s` -> `Paris`, `Lindstr\\"{o}m` -> `Lindstrom`, `\\c{C}elik` -> `Celik` (arXiv and BibTeX names)."""
    if "\\" not in text and "{" not in text:
        return text
    # A control word or an accent takes the spaces after it (`Klim\\v c\\'\\i k` is Klimčík).
    text = re.sub(r"\\(ss|ae|AE|oe|OE|aa|AA|o|O|l|L|i|j)(?![a-zA-Z])\s*", lambda m: _LATEX_LETTERS[m.group(1)],
                  text)
    text = re.sub(r"\\[a-zA-Z]+\s*|\\[^a-zA-Z]\s*", "", text)
    return text.replace("{", "").replace("}", "")


def fold(text: str) -> str:
    """Lower case, LaTeX accents, accents and ligatures folded to ASCII letters; anything else but letters, dots,
    hyphens, commas and apostrophes becomes a space."""
    text = unicodedata.normalize("NFKD", strip_latex(text).translate(_FOLD))
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    return re.sub(r"[^a-z.,'\-]+", " ", text)


@dataclass(frozen=True)
class PersonName:
    """`given`: the given-name parts in order, each a full name (`arkady`) or an initial (`a`); `surname`: the
    surname with its particles, without spaces (`vanderwaals`)."""

    given: tuple[str, ...]
    surname: str

    @property
    def first_initial(self) -> str:
        return self.given[0][0] if self.given else ""


def _given_parts(text: str) -> list[str]:
    parts: list[str] = []
    for token in re.split(r"[\s.]+", text):
        for piece in token.split("-"):
            piece = piece.strip("'")
            if piece:
                parts.append(piece)
    return parts


def parse_name(raw: str) -> PersonName | None:
    """A name as a source writes it -> its parts; None for debris with digits (`7 pages`, `14p`) and for a name
    without two Latin letters of surname (another script)."""
    if any(ch.isdigit() for ch in raw):  # parse debris (`7 pages`, `ud 1994`): no person's name has digits
        return None
    text = fold(raw).strip(" ,")
    if "," in text:  # Surname, Given (a suffix after a second comma is dropped)
        surname_text, _, given_text = text.partition(",")
        given_text = given_text.split(",")[0]
    else:
        # Dots end initials: "a.a.tseytlin" is "a. a. tseytlin".
        words = [w for w in re.sub(r"\.", ". ", text).split() if w.strip(".") not in _SUFFIXES]
        if not words:
            return None
        if len(words) > 1 and len(words[0].strip(".-")) > 1 and all(len(re.sub(r"[^a-z]", "", w)) <= 1
                                                                     for w in words[1:]):
            # Surname first, then initials (`Izawa K.-I`, `Wang J`).
            surname_text, given_text = words[0], " ".join(words[1:])
        else:
            if len(words) > 2 and len(words[-1].strip(".")) == 1 and len(words[-2].strip(".")) > 1:
                words = words[:-1]  # a second surname's initial after the surname (`David J. Fernández C`)
            # The surname is the last word, with the particles before it (not the first word: `Van Morrison`).
            start = len(words) - 1
            while start > 1 and words[start - 1].strip(".") in PARTICLES:
                start -= 1
            surname_text, given_text = " ".join(words[start:]), " ".join(words[:start])
    surname = re.sub(r"[^a-z]", "", surname_text)
    if len(surname) < 2:
        return None
    return PersonName(tuple(_given_parts(given_text)), surname)


def block_key(name: PersonName) -> str:
    """Surname and first initial (`tseytlin a`): every name that may be one person shares it."""
    return f"{name.surname} {name.first_initial}".strip()


def _part_fits(a: str, b: str) -> bool:
    if len(a) == 1 or len(b) == 1:
        return a[0] == b[0]
    return a == b


def compatible(a: PersonName, b: PersonName) -> bool:
    """Whether the two may be one person: the same surname, and given parts that agree where both have one
    (an initial agrees with any name of its letter; two full names must be equal). Missing middle names are
    allowed (`A.` fits `A.A.`), and a given name written as initials fits the same name written out
    (`J.-B.` fits `Jean-Bernard`)."""
    if a.surname != b.surname:
        return False
    if not a.given or not b.given:
        return True
    if not _part_fits(a.given[0], b.given[0]):
        return False
    # Later parts: each part of the shorter list must fit the longer list's parts in order (subsequence).
    short, long_ = sorted((a.given[1:], b.given[1:]), key=len)
    i = 0
    for part in short:
        while i < len(long_) and not _part_fits(part, long_[i]):
            i += 1
        if i == len(long_):
            return False
        i += 1
    return True

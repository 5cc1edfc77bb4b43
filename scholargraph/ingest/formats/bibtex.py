"""Streaming BibTeX parser (ACM DL, DBLP exports): entries -> RawRecord with Unicode field values."""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterator

from scholargraph.graph.records import RawRecord
from scholargraph.ingest.sources import EXCERPT_CHARS, INVALID_UTF8, ReadFailure, iter_text

# RawRecord.data of an entry: {"ENTRYTYPE": "inproceedings", "ID": <citation key>, <field>: <text>}
# with lower-cased field names, LaTeX turned into Unicode, and "author"/"editor" as lists of
# names written "First von Last Jr" (BibTeX's "Last, First" reordered).
ENTRY_TYPE = "ENTRYTYPE"
CITE_KEY = "ID"
NAME_LIST_FIELDS = frozenset({"author", "editor"})
# Identifiers keep their characters: no dash ligatures, no accent commands.
VERBATIM_FIELDS = frozenset({"doi", "url", "eprint", "file", "isbn", "issn", "archiveprefix"})
SKIPPED_TYPES = frozenset({"comment", "preamble"})
# An entry still open after this much text is given up on (it is one missing brace, not a paper).
MAX_ENTRY_CHARS = 16 << 20

MONTHS = {name: full for name, full in zip(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"),
    ("January", "February", "March", "April", "May", "June", "July", "August", "September",
     "October", "November", "December"), strict=True)}

# A new entry starts on a line whose first non-blank character is '@' followed by a type and an
# opening delimiter (_ENTRY_AT at a line start); this is also where parsing resumes after a
# malformed entry.
_ENTRY_AT = re.compile(r"@[ \t]*[A-Za-z][\w-]*[ \t]*[{(]")
_HEADER = re.compile(r"[ \t]*@[ \t]*([A-Za-z][\w-]*)[ \t]*([{(])")
# DOIs as keys hold parentheses ("10.1016/S1071-5819(20)30022-7"): fine inside an '@type{' entry.
_KEY = {"}": re.compile(r"\s*([^,\s{}\"#%'=]*)\s*"), ")": re.compile(r"\s*([^,\s{}()\"#%'=]*)\s*")}
_FIELD_NAME = re.compile(r"\s*([A-Za-z_][^\s=,{}()\"#%']*)\s*=\s*")
_WORD = re.compile(r"[A-Za-z_][^\s=,{}()\"#%']*")
_NUMBER = re.compile(r"[0-9]+")
# The common case in one match: a braced value without inner braces (or a number or a macro),
# then ',' or the entry's end. Anything else ('#' concatenation, nested braces, quotes) takes the
# general path in _parse_fields.
_SIMPLE_FIELD = re.compile(
    r"""\s*([A-Za-z_][^\s=,{}()"#%']*)\s*=\s*(?:\{([^{}]*)\}|([0-9]+)|([A-Za-z_][^\s=,{}()"#%']*))\s*([,})#]?)""")
_SPACE = re.compile(r"\s*")
_BRACES = re.compile(r"[{}]")
_BRACES_OR_QUOTE = re.compile(r'[{}"]')
_LOOKS_LIKE_FIELD = re.compile(r"^[ \t]*[A-Za-z_][\w-]*[ \t]*=", re.M)


class _Malformed(Exception):
    pass


def iter_raw(path: str) -> Iterator[RawRecord]:
    """Entries of a BibTeX file in order; @string macros apply to the entries after them,
    @comment and @preamble are skipped. A malformed entry (unbalanced braces, a field without
    '=') becomes an error RawRecord, and parsing resumes at the next line starting with '@'."""
    macros: dict[str, str] = dict(MONTHS)
    pending = ""  # unparsed text: the current entry (or the file's prolog) and what follows
    pending_line = 1
    in_prolog = True  # text before the first entry is a comment
    scan_from = 0
    dirty = False  # some chunk held invalid UTF-8: check each entry from then on

    def complete_entries(limit: int) -> Iterator[RawRecord]:
        """Cut `pending` at the entry starts found before `limit` and parse all but the last."""
        nonlocal pending, pending_line, in_prolog, scan_from
        cut = 0
        for m in _ENTRY_AT.finditer(pending, scan_from, limit):
            # Searching for the rare '@' and then checking for a line start is much faster than
            # a multi-line '^' pattern over every position.
            start = pending.rfind("\n", 0, m.start()) + 1
            if start < m.start() and pending[start:m.start()].strip(" \t"):
                continue
            if start > 0:
                if not in_prolog:
                    record = _entry_record(path, pending[cut:start], pending_line, macros, dirty)
                    if record is not None:
                        yield record
                pending_line += pending.count("\n", cut, start)
                cut = start
            in_prolog = False
        if cut:
            pending = pending[cut:]
        scan_from = pending.rfind("\n") + 1

    failure = None
    for chunk in iter_text(path):
        if isinstance(chunk, ReadFailure):
            failure = chunk
            break
        text, text_dirty = chunk
        pending += text
        dirty = dirty or text_dirty
        # Only complete lines are searched, so that a header split by the chunk is not missed.
        limit = pending.rfind("\n") + 1
        if limit:
            yield from complete_entries(limit)
        if not in_prolog and len(pending) > MAX_ENTRY_CHARS:
            yield RawRecord(source=path, line=pending_line, excerpt=_excerpt(pending),
                            error=f"unbalanced braces: entry not closed within {MAX_ENTRY_CHARS} characters")
            in_prolog = True  # skip the rest of it, up to the next entry
        if in_prolog:
            # Text outside entries is a comment: keep only the line that may start the next one.
            skipped = pending.rfind("\n") + 1
            pending_line += pending.count("\n", 0, skipped)
            pending = pending[skipped:]
            scan_from = 0
    yield from complete_entries(len(pending))
    if not in_prolog and pending.strip():
        record = _entry_record(path, pending, pending_line, macros, dirty)
        if record is not None:
            yield record
    if failure is not None:
        line = pending_line + pending.count("\n")
        yield ReadFailure(line, failure.offset, failure.reason, _excerpt(pending)).to_raw_record(path)


def _entry_record(path: str, text: str, line: int, macros: dict[str, str],
                  check_utf8: bool) -> RawRecord | None:
    if check_utf8 and INVALID_UTF8.search(text):
        return RawRecord(source=path, line=line, error="invalid UTF-8: undecodable bytes in entry",
                         excerpt=_excerpt(text))
    try:
        data = parse_entry(text, macros)
    except _Malformed as exc:
        return RawRecord(source=path, line=line, error=str(exc), excerpt=_excerpt(text))
    return RawRecord(source=path, line=line, data=data) if data is not None else None


def _excerpt(text: str) -> str:
    return text[:EXCERPT_CHARS].encode("utf-8", "replace").decode("utf-8")


def parse_entry(text: str, macros: dict[str, str]) -> dict | None:
    """One entry's text (from '@' to before the next entry) -> its data dict; None for
    @comment/@preamble/@string (an @string updates `macros`). Raises _Malformed."""
    header = _HEADER.match(text)
    if header is None:
        raise _Malformed("malformed BibTeX: no entry header")
    entry_type = header.group(1).lower()
    if entry_type in SKIPPED_TYPES:
        return None
    close = "}" if header.group(2) == "{" else ")"
    pos = header.end()
    if entry_type == "string":
        fields, pos = _parse_fields(text, pos, close, macros)
        for name, raw in fields:
            macros[name] = raw
        _check_trailing(text, pos)
        return None
    key_match = _KEY[close].match(text, pos)
    key = key_match.group(1)
    pos = key_match.end()
    if pos >= len(text):
        raise _Malformed("unbalanced braces: entry not closed")
    if text[pos] == ",":
        pos += 1
    elif text[pos] != close:
        raise _Malformed(f"malformed BibTeX: expected ',' after the citation key {key!r}")
    fields, pos = _parse_fields(text, pos, close, macros)
    _check_trailing(text, pos)
    data: dict = {ENTRY_TYPE: entry_type, CITE_KEY: key}
    for name, raw in fields:
        if name not in data:  # BibTeX keeps the first of repeated fields
            data[name] = _CLEANERS.get(name, latex_to_unicode)(raw)
    return data


def _check_trailing(text: str, pos: int) -> None:
    # Free text between entries is a comment in BibTeX; but fields after the entry's closing
    # brace mean a stray '}' closed it early.
    rest = text[pos:]
    if rest.lstrip().startswith(",") or _LOOKS_LIKE_FIELD.search(rest):
        raise _Malformed("unbalanced braces: fields after the entry's closing brace")


def _parse_fields(text: str, pos: int, close: str, macros: dict[str, str]) -> tuple[list, int]:
    """[(lower-cased name, raw value)], position after the entry's closing delimiter."""
    fields: list[tuple[str, str]] = []
    end = len(text)
    while True:
        simple = _SIMPLE_FIELD.match(text, pos)
        if simple is not None:
            name, braced, number, word, terminator = simple.groups()
            if terminator == "," or terminator == close:
                value = braced if braced is not None else number if number is not None \
                    else macros.get(word.lower(), "")
                fields.append((name.lower(), value))
                pos = simple.end()
                if terminator == close:
                    return fields, pos
                continue
        pos = _SPACE.match(text, pos).end()
        if pos >= end:
            raise _Malformed("unbalanced braces: entry not closed")
        if text[pos] == close:
            return fields, pos + 1
        name_match = _FIELD_NAME.match(text, pos)
        if name_match is None:
            raise _Malformed(f"malformed BibTeX: expected a field at {text[pos:pos + 30]!r}")
        name = name_match.group(1).lower()
        pos = name_match.end()
        parts = []
        while True:
            if pos >= end:
                raise _Malformed(f"unbalanced braces: value of {name!r} not closed")
            char = text[pos]
            if char == "{":
                stop = _closing_brace(text, pos)
                if stop < 0:
                    raise _Malformed(f"unbalanced braces: value of {name!r} not closed")
                parts.append(text[pos + 1:stop])
                pos = stop + 1
            elif char == '"':
                stop = _closing_quote(text, pos)
                if stop < 0:
                    raise _Malformed(f"unbalanced braces: quoted value of {name!r} not closed")
                parts.append(text[pos + 1:stop])
                pos = stop + 1
            elif "0" <= char <= "9":
                number = _NUMBER.match(text, pos)
                parts.append(number.group())
                pos = number.end()
            else:
                word = _WORD.match(text, pos)
                if word is None:
                    raise _Malformed(f"malformed BibTeX: unexpected {char!r} in field {name!r}")
                # An undefined macro expands to nothing, as in BibTeX.
                parts.append(macros.get(word.group().lower(), ""))
                pos = word.end()
            pos = _SPACE.match(text, pos).end()
            if pos < end and text[pos] == "#":
                pos = _SPACE.match(text, pos + 1).end()
                continue
            break
        fields.append((name, parts[0] if len(parts) == 1 else "".join(parts)))
        if pos < end and text[pos] == ",":
            pos += 1
        elif pos < end and text[pos] == close:
            return fields, pos + 1
        elif pos >= end:
            raise _Malformed("unbalanced braces: entry not closed")
        else:
            raise _Malformed(f"malformed BibTeX: expected ',' after field {name!r}")


def _closing_brace(text: str, pos: int) -> int:
    """Index of the '}' matching the '{' at `pos`, or -1. Like BibTeX, every brace counts."""
    stop = text.find("}", pos + 1)
    if stop < 0:
        return -1
    if text.find("{", pos + 1, stop) < 0:
        return stop
    depth = 0
    for m in _BRACES.finditer(text, pos):
        if m.group() == "{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return -1


def _closing_quote(text: str, pos: int) -> int:
    """Index of the '"' ending the quoted value opened at `pos` (quotes inside braces don't)."""
    depth = 0
    for m in _BRACES_OR_QUOTE.finditer(text, pos + 1):
        char = m.group()
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                return -1
        elif depth == 0:
            return m.start()
    return -1


# --- names -------------------------------------------------------------------------------------

_AND = re.compile(r"\s+and\s+", re.I)
_COMMA = re.compile(",")


def split_names(raw: str) -> list[str]:
    """BibTeX name list -> ["First von Last Jr", ...]; 'and others' is dropped."""
    names = []
    for part in _split_top_level(raw.strip(), _AND):
        part = part.strip()
        if not part or part.lower() == "others":
            continue
        pieces = [p.strip() for p in _split_top_level(part, _COMMA)]
        if len(pieces) == 2:  # Last, First
            pieces = [pieces[1], pieces[0]]
        elif len(pieces) >= 3:  # Last, Jr, First
            pieces = [pieces[2], pieces[0], pieces[1]]
        name = latex_to_unicode(" ".join(p for p in pieces if p))
        if name:
            names.append(name)
    return names


def _split_top_level(text: str, separator: re.Pattern) -> list[str]:
    # Separators inside braces ("{Barnes and Noble}") do not split.
    if "{" not in text:
        return separator.split(text)
    parts, start = [], 0
    for m in separator.finditer(text):
        if text.count("{", start, m.start()) == text.count("}", start, m.start()):
            parts.append(text[start:m.start()])
            start = m.end()
    parts.append(text[start:])
    return parts


# --- LaTeX -> Unicode --------------------------------------------------------------------------

_ACCENTS = {
    "'": "\u0301", "`": "\u0300", "^": "\u0302", '"': "\u0308", "~": "\u0303", "=": "\u0304",
    ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328",
    "r": "\u030a", "b": "\u0331", "d": "\u0323",
}
# Control words that are letters: TeX swallows the blank after them ("Stra\ss e").
_LETTERS = {
    "ss": "ß", "SS": "SS", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ",
    "aa": "å", "AA": "Å", "l": "ł", "L": "Ł", "i": "ı", "j": "ȷ", "dh": "ð", "DH": "Ð",
    "th": "þ", "TH": "Þ", "ng": "ŋ", "NG": "Ŋ", "dj": "đ", "DJ": "Đ",
}
_SYMBOLS = {
    "texttimes": "×", "times": "×", "textendash": "–", "textemdash": "—", "ldots": "…",
    "dots": "…", "textellipsis": "…", "textquoteright": "’", "textquoteleft": "‘",
    "textquotedblleft": "“", "textquotedblright": "”", "textregistered": "®",
    "texttrademark": "™", "copyright": "©", "textcopyright": "©", "pounds": "£",
    "textsterling": "£", "euro": "€", "texteuro": "€", "S": "§", "P": "¶", "dag": "†",
    "ddag": "‡", "textbullet": "•", "textdegree": "°", "degree": "°", "textasciitilde": "~",
    "textasciicircum": "^", "textbackslash": "\\", "textbar": "|", "textless": "<",
    "textgreater": ">", "textunderscore": "_", "textperiodcentered": "·",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
    "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ",
    "tau": "τ", "upsilon": "υ", "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π",
    "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "neq": "≠", "ne": "≠", "approx": "≈",
    "infty": "∞", "pm": "±", "cdot": "·", "rightarrow": "→", "to": "→", "leftarrow": "←",
    "Rightarrow": "⇒", "in": "∈", "ell": "ℓ", "sum": "∑", "prod": "∏", "sqrt": "√",
    "partial": "∂", "nabla": "∇", "forall": "∀", "exists": "∃", "cap": "∩", "cup": "∪",
    "subset": "⊂", "subseteq": "⊆", "sim": "∼", "propto": "∝", "ast": "∗", "star": "⋆",
    "circ": "∘", "mid": "|", "ldquo": "“", "rdquo": "”",
}
# Formatting commands vanish and leave their argument.
_FORMATTING = frozenset({
    "textit", "textbf", "emph", "textsc", "texttt", "textrm", "textsf", "textsl", "textup",
    "textmd", "textnormal", "mathrm", "mathbf", "mathit", "mathcal", "mathbb", "mathsf",
    "mathtt", "mathfrak", "boldmath", "bf", "it", "em", "rm", "sc", "tt", "sf", "sl", "url",
    "underline", "uppercase", "lowercase", "mbox", "hbox", "text", "operatorname",
    "NoCaseChange", "protect", "relax", "noopsort", "Bbb", "bm", "small", "large", "footnotesize",
})
_ESCAPES = {
    "&": "&", "%": "%", "_": "_", "#": "#", " ": " ", ",": " ", ";": " ", ":": " ",
    "!": "", "-": "", "/": "", "@": "", "\\": " ", "\n": " ",
    # Placeholders survive the brace and dollar stripping and are turned back at the end.
    "$": "\ue000", "{": "\ue001", "}": "\ue002",
}
_PLACEHOLDERS = str.maketrans({"\ue000": "$", "\ue001": "{", "\ue002": "}"})

_LATEX = re.compile(
    r"""\\(?:(?P<sym>['"`^~=.])|(?P<let>[uvHckrbd])(?![A-Za-z]))[ \t]*"""
    r"""(?:\{[ \t]*(?P<base1>\\[ijlo](?![A-Za-z])|[A-Za-z])?[ \t]*\}"""
    r"""|(?P<base2>\\[ij](?![A-Za-z])|[A-Za-z]))"""
    r"""|\\(?P<word>[A-Za-z]+)(?P<trail>\{\}|[ \t\n]*)"""
    r"""|\\(?P<esc>[^A-Za-z]|$)""")
# Anything the slow path handles: commands, groups, math, ties, ligatures, entities.
_NEEDS_WORK = re.compile(r"[\\{}$~&`'\n\t\r-]")
_SURROGATES = re.compile("[\ud800-\udfff]")


def _latex_command(m: re.Match) -> str:
    accent = m.group("sym") or m.group("let")
    if accent:
        base = m.group("base1") or m.group("base2") or ""
        if base.startswith("\\"):
            base = {"\\i": "i", "\\j": "j", "\\l": "ł", "\\o": "ø"}[base]
        return base + _ACCENTS[accent] if base else ""
    word = m.group("word")
    if word is not None:
        trail = m.group("trail")
        if word in _LETTERS:
            return _LETTERS[word]
        if word in _FORMATTING:
            return ""
        text = _SYMBOLS.get(word, word)  # unknown commands (\log, \max) read as their name
        return text + " " if trail and trail != "{}" else text
    esc = m.group("esc")
    return _ESCAPES.get(esc, esc)


def latex_to_unicode(raw: str) -> str:
    """BibTeX/LaTeX field text -> plain Unicode: accents composed, escapes and known commands
    replaced, grouping braces and math dollars removed, dashes and quotes typographic, HTML
    entities decoded, whitespace collapsed."""
    if _NEEDS_WORK.search(raw) is None:
        return raw.strip() if "  " not in raw else " ".join(raw.split())
    text = _LATEX.sub(_latex_command, raw) if "\\" in raw else raw
    text = text.replace("{", "").replace("}", "").replace("$", "").replace("~", " ")
    if "-" in text:
        text = text.replace("---", "—").replace("--", "–")
    if "`" in text or "'" in text:
        text = text.replace("``", "“").replace("''", "”")
    if "&" in text:
        text = html.unescape(text)
    if "\\" in raw:
        text = text.translate(_PLACEHOLDERS)
    text = " ".join(text.split())
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return text


def _verbatim(raw: str) -> str:
    if "\\" not in raw and "{" not in raw:
        return "".join(raw.split())
    text = raw.replace("\\_", "_").replace("\\%", "%").replace("\\&", "&").replace("\\#", "#")
    return "".join(text.translate({ord("{"): None, ord("}"): None}).split())


_CLEANERS = {**{name: split_names for name in NAME_LIST_FIELDS},
             **{name: _verbatim for name in VERBATIM_FIELDS}}

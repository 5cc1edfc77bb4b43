"""HotCRP's conflict types, read as HotCRP reads them: the one parser behind ingest's paper JSON and conference's files.

Everything here follows kohler/hotcrp at commit 0f25da6c453c5cd9b869ae4f6bafdd0aee4b885e (2026-08-22); the
lines named are that commit's. A conflict is an integer: bit 0 pins a PC conflict (only an administrator may
change it), bits 1-4 are its PC type, 32 and 64 say the person is an author or a contact of the paper
(src/init.php lines 17-20, src/conflict.php lines 13-37). It lives in the base layer because both
`ingest.hotcrp` (the paper JSON's `pc_conflicts`) and `conference.declared` (the files a chair hands
`--conflicts`) read it, and those two packages never import each other (.importlinter)."""

from __future__ import annotations

# src/init.php lines 17-20.
CONFLICT_MAXUNCONFLICTED, CONFLICT_AUTHOR, CONFLICT_CONTACT = 1, 32, 64
# src/conflict.php lines 15-20.
CT_DEFAULT, CT_ADMINISTRATIVE, CT_GENERIC, F_PIN, FM_PC, FM_PCTYPE = 2, 28, 30, 1, 31, 30
# src/conflict.php lines 30-37 ($json_map): the words HotCRP's JSON and its uploads use for the PC types.
TYPE_NAMES = {2: "collaborator", 4: "advisor", 6: "institutional", 8: "personal", 10: "other", 28: "administrative"}

_PIN_WORDS = {"pin": True, "pinned": True, "unpin": False, "unpinned": False}
_AUTHOR_WORDS = {"author": CONFLICT_AUTHOR, "contact": CONFLICT_CONTACT}
_TYPE_WORDS = {
    **dict.fromkeys(("none", "n", "no", "0", "off", "unconflicted", "noconflict", "nonconflict", "non-conflict"), 0),
    **dict.fromkeys(("y", "yes", "1", "on", "conflicted", "conflict"), CT_GENERIC),
    **dict.fromkeys(("collab", "collaborator"), 2), **dict.fromkeys(("student", "advisor", "advisee"), 4),
    **dict.fromkeys(("institution", "institutional"), 6), "personal": 8, "other": 10,
    **dict.fromkeys(("admin", "administrative", "administrator"), CT_ADMINISTRATIVE),
}
# PHP's strtolower lowers ASCII letters only (PHP 8.2 and on).
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# src/conflict.php lines 22-29 ($desc_map) and 207-227 (unparse_text): the English texts of HotCRP's "PC
# conflicts" download (src/listactions/la_get_sub.php line 73), which parse_assignment does not all read.
# "Conflict" and "Pinned conflict" name no type (any type, when the site hides them): read as CT_GENERIC.
_TEXTS = {"no conflict": 0, "contact": CONFLICT_CONTACT, "author": CONFLICT_AUTHOR,
          "pinned conflict": CT_GENERIC | F_PIN, "conflict": CT_GENERIC, "recent collaborator": 2,
          "advisor/advisee": 4, "institutional": 6, "personal": 8, "other": 10, "administrative": CT_ADMINISTRATIVE}


def parse_assignment(text: str) -> int | None:
    """src/conflict.php Conflict::parse_assignment, lines 118-192: the conflict a type written in words gives
    ("pinned advisor", "collaborator author", "no", "12"), None where HotCRP answers false (an unknown word,
    two different types, pinned and unpinned, an odd number or one over 30, nothing at all). Words are split at
    single spaces, as PHP's explode(" ", ...) does: an empty word after a type is refused there too."""
    pin: bool | None = None
    ct: int | None = None
    author = 0
    for word in text.translate(_ASCII_LOWER).split(" "):
        if word in _PIN_WORDS:
            if pin is not None and pin != _PIN_WORDS[word]:
                return None
            pin = _PIN_WORDS[word]
            continue
        if word in _AUTHOR_WORDS:
            author |= _AUTHOR_WORDS[word]
            continue
        xct: int | None = None
        if word in _TYPE_WORDS:
            xct = _TYPE_WORDS[word]
        elif word and word.isascii() and word.isdigit():  # ctype_digit, lines 165-169
            xct = int(word)
            if xct & 1 or xct > CT_GENERIC:
                return None
        elif word:
            return None
        # Lines 174-182: "conflict" beside a named type is that type; two different types are refused.
        if ct == CT_GENERIC and xct is not None and xct > 0:
            ct = xct
        elif xct == CT_GENERIC and ct is not None and ct > 0:
            xct = ct
        if ct is not None and xct != ct:
            return None
        ct = xct
    if not author and ct is None and pin is None:
        return None
    if pin is not None and ct is None:
        ct = CT_GENERIC  # "pinned" alone pins a conflict, line 188-190
    return author | (ct or 0) | (F_PIN if pin else 0)


def parse_json(value: object) -> int | None:
    """src/conflict.php Conflict::parse_json, lines 194-205: a `pc_conflicts` value of the paper JSON (true,
    false, an integer, or words as parse_assignment reads them); None where HotCRP answers false (its JSON import
    then warns and takes CT_DEFAULT, src/options/o_pcconflicts.php lines 179-183)."""
    if isinstance(value, bool):
        return CT_GENERIC if value else 0
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return parse_assignment(value)
    return None


def parse_text(text: str) -> int | None:
    """The conflict a cell of HotCRP's "PC conflicts" download gives: its English unparse_text ("Recent
    collaborator", "Advisor/advisee", "Pinned conflict", ...), else the words parse_assignment reads; None
    for neither (a site may translate the texts, src/conflict.php line 224)."""
    key = " ".join(text.translate(_ASCII_LOWER).split())
    return _TEXTS[key] if key in _TEXTS else parse_assignment(key)


def pc_part(ct: int) -> int:
    """src/conflict.php Conflict::pc_part, lines 60-64: the pin bit and the PC type (0 for a negative value,
    which no HotCRP writes)."""
    return ct & FM_PC if ct > 0 else 0


def is_conflicted(ct: int) -> bool:
    """src/conflict.php Conflict::is_conflicted, lines 39-43: any conflict, an author's included."""
    return ct > CONFLICT_MAXUNCONFLICTED


def is_pc_conflict(ct: int) -> bool:
    """Whether the PC part of `ct` is a conflict (a type, pinned or not; "pinned unconflicted", 1, is none):
    what an upload's `conflict` row sets, as the author and contact bits are refused there
    (src/assigners/a_conflict.php lines 106-111)."""
    return is_conflicted(pc_part(ct))


def is_author(ct: int) -> bool:
    """src/conflict.php Conflict::is_author, lines 44-48."""
    return ct >= CONFLICT_AUTHOR


def type_words(ct: int) -> str:
    """`ct` in the words of HotCRP's JSON ("pinned advisor", "collaborator author"; "" for a conflict of no
    named type), as src/conflict.php Conflict::unparse_json writes them (lines 293-310)."""
    part = pc_part(ct)
    kind = part & FM_PCTYPE
    words = (["pinned"] if part & F_PIN else []) + (
        [TYPE_NAMES.get(kind, str(kind))] if kind and kind != CT_GENERIC else [])
    words += [word for word, bit in _AUTHOR_WORDS.items() if ct > 0 and ct & bit]
    return " ".join(words)


def upload_type(ct: int) -> str | None:
    """The `conflicttype` cell of a bulk-assignment upload that sets the PC part of `ct`, or None when that
    part is no conflict. The upload sets Conflict::apply_pc(old, parsed, admin) (src/assigners/a_conflict.php
    line 111; a chair is an admin), and apply_pc turns CT_GENERIC ("yes", "conflict") into CT_ADMINISTRATIVE
    for a pair with no type yet (src/conflict.php lines 79-82): so a conflict of no named type (the JSON's
    `true`, which HotCRP writes for CT_DEFAULT, src/conflict.php line 290, or for any conflict when the
    exporter cannot see authors, src/options/o_pcconflicts.php lines 69-72) is written as CT_DEFAULT,
    `collaborator`, the type HotCRP stores for it. Author and contact bits are never written: the upload refuses
    them (src/assigners/a_conflict.php line 107)."""
    part = pc_part(ct)
    if not is_conflicted(part):
        return None
    if part & FM_PCTYPE == CT_GENERIC:
        part = (part & F_PIN) | CT_DEFAULT
    return type_words(part)  # the PC part only: no author or contact word

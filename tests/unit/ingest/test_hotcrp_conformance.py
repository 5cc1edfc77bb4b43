"""What we hand back to HotCRP, checked against HotCRP's own parsers. HotCRP does not install here, so each
parser it runs on an upload is re-stated in Python from its code, line by line, at the commit below, and every
row we write must pass it: the conflicts file of `ingest hotcrp-papers` and the preferences of `reviewers
recommend --format hotcrp`. The re-statement also checks scholargraph/hotcrp_conflicts.py, the one reader of
HotCRP's conflict types that ingest and conference/declared.py share."""

from __future__ import annotations

import csv
import io
import json

import pytest

from scholargraph import hotcrp_conflicts
from scholargraph.conference.declared import HOTCRP_PC_CONFLICTS, read_declared
from scholargraph.conference.exchange import Pair, export, hotcrp_preference
from scholargraph.errors import UsageError
from scholargraph.ingest.hotcrp import hotcrp_conflict, read_papers, upload_type, write_conflicts

HOTCRP_COMMIT = "0f25da6c453c5cd9b869ae4f6bafdd0aee4b885e"  # kohler/hotcrp, 2026-08-22

# src/init.php lines 17-20.
CONFLICT_MAXUNCONFLICTED, CONFLICT_AUTHOR, CONFLICT_CONTACTAUTHOR = 1, 32, 64
# src/conflict.php lines 15-17 and 22-37.
CT_DEFAULT, CT_ADMINISTRATIVE, CT_GENERIC = 2, 28, 30
JSON_MAP = {2: "collaborator", 4: "advisor", 6: "institutional", 8: "personal", 10: "other", 28: "administrative"}
DESC_MAP = {2: "Recent collaborator", 4: "Advisor/advisee", 6: "Institutional", 8: "Personal", 10: "Other",
            28: "Administrative"}


def apply_pc(old: int, new: int, admin: bool) -> int:
    """src/conflict.php Conflict::apply_pc, lines 66-84: the PC conflict an upload (or a save) stores."""
    assert new & ~31 == 0
    if not admin and old & 1:
        return old
    if not admin and new & 30 == CT_ADMINISTRATIVE:
        new = (new & ~30) | (old & 30 or CT_GENERIC)
    if new & 30 == CT_GENERIC:
        new = (new & ~30) | (old & 30 or (CT_ADMINISTRATIVE if admin else CT_DEFAULT))
    return new if admin else new & ~1


def unparse_text(ct: int, desc: bool) -> str:
    """src/conflict.php Conflict::unparse_text, lines 207-227 (English): the `conflicttype` cell of the "PC
    conflicts" download (src/listactions/la_get_sub.php lines 53-75)."""
    if ct <= CONFLICT_MAXUNCONFLICTED:
        return "No conflict"
    if ct >= CONFLICT_CONTACTAUTHOR:
        return "Contact"
    if ct >= CONFLICT_AUTHOR:
        return "Author"
    if ct in (CT_DEFAULT | 1, CT_ADMINISTRATIVE | 1):
        return "Pinned conflict"
    if desc and ct & ~1 in DESC_MAP:
        return DESC_MAP[ct & ~1]
    return "Conflict"


def unparse_json(ct: int, desc: bool) -> bool | str:
    """src/conflict.php Conflict::unparse_json, lines 287-311: how the paper JSON writes a conflict."""
    if ct <= 0:
        return False
    if not desc and ct == CT_DEFAULT:
        return True
    words = []
    if ct & 1:
        words.append("pinned")
    if ct & 30 in JSON_MAP:
        words.append(JSON_MAP[ct & 30])
    elif ct & 30:
        words.append(str(ct & 30))
    elif ct & 1:
        words.append("unconflicted")
    if ct & CONFLICT_AUTHOR:
        words.append("author")
    if ct & CONFLICT_CONTACTAUTHOR:
        words.append("contact")
    return " ".join(words)


def exported_pc_conflicts(desc: bool, can_view_authors: bool) -> list[bool | str]:
    """src/options/o_pcconflicts.php value_export_json, lines 58-82: every value `pc_conflicts` can hold, over
    every stored conflict (its PC part, pin bit and author bits): conflicted ones only, a contact written as an
    author, `true` when the exporter cannot see the authors."""
    values: list[bool | str] = []
    for ct in range(128):
        if not ct > CONFLICT_MAXUNCONFLICTED:
            continue
        if not can_view_authors:
            values.append(True)
            continue
        if ct & CONFLICT_CONTACTAUTHOR:
            ct = (ct | CONFLICT_AUTHOR) & ~CONFLICT_CONTACTAUTHOR
        values.append(unparse_json(ct, desc))
    return values


def parse_assignment(text: str) -> int | None:
    """src/conflict.php Conflict::parse_assignment, lines 120-192 (None for PHP's false)."""
    pin = ct = None
    au = 0
    for w in text.lower().split(" "):
        if w in ("pin", "pinned", "unpin", "unpinned"):
            p = w[0] == "p"
            if pin is not None and pin != p:
                return None
            pin = p
            continue
        elif w == "author":
            au |= CONFLICT_AUTHOR
            continue
        elif w == "contact":
            au |= CONFLICT_CONTACTAUTHOR
            continue
        xct = None
        if w in ("none", "n", "no", "0", "off", "unconflicted", "noconflict", "nonconflict", "non-conflict"):
            xct = 0
        elif w in ("y", "yes", "1", "on", "conflicted", "conflict"):
            xct = CT_GENERIC
        elif w in ("collab", "collaborator"):
            xct = 2
        elif w in ("student", "advisor", "advisee"):
            xct = 4
        elif w in ("institution", "institutional"):
            xct = 6
        elif w == "personal":
            xct = 8
        elif w == "other":
            xct = 10
        elif w in ("admin", "administrative", "administrator"):
            xct = 28
        elif w != "" and all("0" <= c <= "9" for c in w):  # ctype_digit
            xct = int(w)
            if xct & 1 or xct > 30:
                return None
        elif w != "":
            return None
        if ct == CT_GENERIC and xct is not None and xct > 0:
            ct = xct
        elif xct == CT_GENERIC and ct is not None and ct > 0:
            xct = ct
        if ct is not None and xct != ct:
            return None
        ct = xct
    if au == 0 and ct is None and pin is None:
        return None
    if pin is not None and ct is None:
        ct = CT_GENERIC
    return au | (ct or 0) | (1 if pin else 0)


def upload_conflict(cell: str | None, old: int = 0) -> int | None:
    """src/assigners/a_conflict.php Conflict_AssignmentParser::apply, lines 93-124, for action `conflict` by a
    chair (`$admin`, line 96: the chair manages every paper): the PC conflict the row stores for a pair whose
    stored conflict is `old`, or None where HotCRP answers "Conflict type ... not found". The cell is the
    `conflict` column (src/assignmentset.php line 1559: `conflicttype` is its synonym); an empty cell is "",
    not absent (lib/csv.php parse_comma lines 670-712 keeps a trailing empty field; CsvRow::offsetGet lines
    31-41 returns it), so only a file without the column gets the default "on"."""
    text = cell if cell is not None else "on"
    if ":" in text:
        text = text[text.index(":") + 1:]
    ct = parse_assignment(text)
    if ct is None or ct >= CONFLICT_AUTHOR:  # Conflict::is_author, src/conflict.php lines 46-48
        return None
    ct = apply_pc(old, ct, admin=True)  # line 111
    return ((old & ~31) | ct) & 31  # lines 113-120, the PC part (mask FM_PC)


def upload_columns(header: list[str]) -> dict[str, int]:
    """src/assignmentset.php install_csv_header, lines 1548-1562 and 1590-1594, with lib/csv.php set_header,
    lines 397-417 (names matched without case when unambiguous): the columns an upload's rows are read by; a
    header without `action` and `paper` is refused."""
    lower = [h.lower() for h in header]
    synonyms = [("action", "assignment", "type"), ("paper", "pid", "paperid", "paper_id", "id", "search"),
                ("preference", "pref", "revpref"), ("conflict", "conflict_type", "conflicttype")]
    columns = {name: i for i, name in enumerate(lower)}
    for canonical, *others in synonyms:
        for name in (canonical, *others):
            if name in columns:
                columns.setdefault(canonical, columns[name])
    assert "action" in columns and "paper" in columns, f"HotCRP refuses the header {header}"
    return columns


@pytest.mark.parametrize("desc, can_view_authors", [(True, True), (False, True), (True, False)],
                         ids=["conflict-types-shown", "conflict-types-hidden", "authors-hidden"])
def test_every_conflict_row_we_write_is_one_hotcrps_upload_accepts(tmp_path, desc, can_view_authors):
    values = exported_pc_conflicts(desc, can_view_authors)
    papers = [{"pid": 1, "title": "T", "authors": [{"given_name": "Ann", "family_name": "Lee"}],
               "pc_conflicts": {f"pc{k}@x.org": v for k, v in enumerate(values)}}]
    (tmp_path / "papers.json").write_text(json.dumps(papers), encoding="utf-8")
    found = read_papers(str(tmp_path / "papers.json"))
    write_conflicts(found.conflicts, tmp_path / "c.csv")
    header, *rows = list(csv.reader(io.StringIO((tmp_path / "c.csv").read_text(encoding="utf-8"))))
    columns = upload_columns(header)
    for row in rows:
        assert row[columns["action"]] == "conflict" and row[columns["paper"]] == "1"
        ct = upload_conflict(row[columns["conflict"]])
        assert ct is not None and ct > CONFLICT_MAXUNCONFLICTED, row
    # Nothing HotCRP would take back is lost: every value with a PC conflict in it is a row; what is left out is
    # an author (or contact) conflict alone, which HotCRP's upload cannot set.
    has_pc_part = [v is True or (parse_assignment(v) or 0) & 30 != 0 for v in values]
    assert len(rows) == sum(has_pc_part)
    assert found.author_conflicts == len(values) - sum(has_pc_part)
    assert found.author_conflicts == (6 if can_view_authors else 0)  # 32, 33, 64, 65, 96, 97: no PC part


def test_the_types_keep_their_meaning_on_the_way_back():
    # The type written back makes a chair's upload store the PC conflict HotCRP exported: the same type, pinned
    # staying pinned. A stored conflict never has the generic type 30: apply_pc gives it a type on every save
    # (src/paperstatus.php line 922), CT_DEFAULT where no administrator saves it.
    for ct in range(2, 32):
        value = unparse_json(ct, desc=True)
        assert isinstance(value, str)
        written = upload_type(hotcrp_conflict(value))
        if ct & 30 == 0:
            assert written is None, value  # "pinned unconflicted": no conflict to write
        else:
            meant = ct if ct & 30 != CT_GENERIC else (ct & 1) | CT_DEFAULT
            assert written is not None and upload_conflict(written) == meant, (value, written)
    # `true` is CT_DEFAULT exported where the site hides the types (src/conflict.php line 290): `yes` would be
    # stored as an administrative conflict (apply_pc with admin, lines 79-82).
    assert unparse_json(CT_DEFAULT, desc=False) is True
    assert upload_conflict(upload_type(hotcrp_conflict(True))) == CT_DEFAULT
    assert upload_conflict("yes") == CT_ADMINISTRATIVE


def test_an_unknown_type_is_written_as_hotcrps_import_takes_it(tmp_path):
    # src/options/o_pcconflicts.php lines 179-183: HotCRP's own JSON import warns and takes CT_DEFAULT. Written
    # as `yes`, a chair's upload stored CT_ADMINISTRATIVE instead.
    papers = [{"pid": 1, "title": "T", "pc_conflicts": {"pc@x.org": "shared office", "pc2@x.org": 7}}]
    (tmp_path / "papers.json").write_text(json.dumps(papers), encoding="utf-8")
    found = read_papers(str(tmp_path / "papers.json"))
    assert hotcrp_conflict("shared office") is None and found.unknown_types == ["shared office"]
    stored = {email: upload_conflict(kind) for _, email, kind in found.conflicts}
    assert stored == {"pc@x.org": CT_DEFAULT, "pc2@x.org": 7}  # 7: a pinned institutional conflict, kept


# --- one reader of HotCRP's conflict types -----------------------------------------------------------------

WORDS = ["", "none", "n", "no", "0", "off", "unconflicted", "noconflict", "nonconflict", "non-conflict", "y", "yes",
         "1", "on", "conflicted", "conflict", "collab", "collaborator", "student", "advisor", "advisee",
         "institution", "institutional", "personal", "other", "admin", "administrative", "administrator", "2", "12",
         "13", "30", "32", "002", "pin", "pinned", "unpin", "unpinned", "author", "contact", "false", "clear",
         "true", "shared", "Advisor", "PINNED"]


def phrases():
    yield from WORDS
    for a in WORDS:
        for b in WORDS:
            yield f"{a} {b}"
    yield from ("pinned unconflicted", "pinned advisor author", "advisor conflict", "conflict advisor",
                "advisor collaborator", "advisor ", " advisor", "pinned unpinned", "yes no")


def test_the_shared_parser_reads_every_type_as_hotcrp_does():
    for text in phrases():
        assert hotcrp_conflicts.parse_assignment(text) == parse_assignment(text), text
    for value in (True, False, 0, 2, 31, 64, 3.0, None, [], "pinned advisor"):
        expected = {True: CT_GENERIC, False: 0}.get(value) if isinstance(value, bool) else (
            value if isinstance(value, int) else parse_assignment(value) if isinstance(value, str) else None)
        assert hotcrp_conflicts.parse_json(value) == expected, value  # src/conflict.php lines 194-205


def declared_verdict(tmp_path, cell: str) -> str:
    path = tmp_path / "c.csv"
    path.write_text(f"paper,action,email,conflicttype\n1,conflict,pc@x.org,{cell}\n", encoding="utf-8")
    try:
        found = read_declared(str(path), "--conflicts")
    except UsageError:
        return "refused"
    return "conflict" if found.conflicts else "none"


def test_a_declared_conflict_row_is_read_as_hotcrps_upload_reads_it(tmp_path):
    # conference/declared.py had its own list of no-conflict words: `n`, `off`, `unconflicted`, `noconflict` and
    # `pinned unconflicted` (which HotCRP's own Conflict::unparse_assignment writes) were conflicts there, and
    # `false`/`clear`, which HotCRP refuses, were none.
    for cell in ("n", "off", "unconflicted", "noconflict", "pinned unconflicted", "none", "no", "advisor", "pinned",
                 "yes", "false", "clear", "author", "collaborator author", "shared office", "any:advisor", "13"):
        ct = upload_conflict(cell)
        expected = "refused" if ct is None else "conflict" if ct > CONFLICT_MAXUNCONFLICTED else "none"
        assert declared_verdict(tmp_path, cell) == expected, cell


def test_the_pc_conflicts_download_is_read_in_both_header_forms(tmp_path):
    # src/listactions/la_get_sub.php lines 53-75: given_name,family_name since 2024-09 (first,last before), one
    # row per conflicted pair, its type as unparse_text writes it.
    conflicted = [ct for ct in range(128) if ct > CONFLICT_MAXUNCONFLICTED]
    for names in ("given_name,family_name", "first,last"):
        for desc in (True, False):
            rows = [f"1,T,Ann,Lee,pc{ct}@x.org,{unparse_text(ct, desc)}" for ct in conflicted]
            path = tmp_path / "pcconflicts.csv"
            path.write_text(f"paper,title,{names},email,conflicttype\n" + "\n".join(rows) + "\n", encoding="utf-8")
            found = read_declared(str(path), "--conflicts")
            assert found.layout == HOTCRP_PC_CONFLICTS and len(found.conflicts) == len(conflicted)
            assert "read as HotCRP PC conflicts (paper,title,given_name,family_name,email,conflicttype; first,last " \
                   "before 2024-09)" in found.describe()
    path.write_text("paper,title,given_name,family_name,email,conflicttype\n1,T,A,B,pc@x.org,No conflict\n"
                    "2,U,A,B,pc@x.org,Recent collaborator\n", encoding="utf-8")
    found = read_declared(str(path), "--conflicts")
    assert found.other_rows == 1 and [p.reason for p in found.conflicts] == ["declared (hotcrp: collaborator)"]


# --- preferences ------------------------------------------------------------------------------------------


def parse_preference(text: str, pref_min: int, pref_max: int) -> int | None:
    """src/assigners/a_preference.php parsef and parse_check, lines 80-142, for the plain numbers we write
    (is_numeric, line 85): the preference stored, or None where HotCRP refuses it. -100 passes whatever the
    site's range (line 137): HotCRP's help reads it as "you think you have a conflict" (etc/msgs.json line 239)
    and the `prefconflict` autoassigner turns it into one (etc/autoassigners.json line 4)."""
    value = float(text)
    stored = round(value)
    if value != -100.0 and not pref_min <= stored <= pref_max:
        return None
    return stored


def test_preferences_stay_in_hotcrps_typical_range_and_never_say_conflict():
    # etc/msgs.json line 239 and src/help/h_chairsguide.php lines 127-128: -20 to 20 is the typical range; a site
    # may hold its PC to it (etc/settinginfo.json lines 169-182, preference_min / preference_max).
    scores = [-1e9, -5.0, -1.0, -0.5, -0.01, 0.0, 0.024, 0.026, 0.33, 0.5, 0.8125, 1.0, 1.7, 1e9]
    pairs = [Pair(f"p{k}", "r", "r", s) for k, s in enumerate(scores)]
    header, *rows = list(csv.reader(io.StringIO(export("hotcrp", "scores", pairs, {"r": "r@x.org"}).text)))
    columns = upload_columns(header)
    assert len(rows) == len(scores)
    for score, row in zip(scores, rows):
        assert row[columns["action"]] == "pref"  # etc/assignmentparsers.json lines 232-237
        stored = parse_preference(row[columns["preference"]], -20, 20)
        assert stored is not None and stored != -100 and stored == hotcrp_preference(score), (score, row)
    assert [hotcrp_preference(s) for s in (0.0, 0.5, 1.0, 5.0, -5.0)] == [0, 10, 20, 20, -20]

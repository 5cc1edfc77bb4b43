"""What we hand back to HotCRP, checked against HotCRP's own parsers. HotCRP does not install here, so each
parser it runs on an upload is re-stated in Python from its code, line by line, at the commit below, and every
row we write must pass it: the conflicts file of `ingest hotcrp-papers` and the preferences of `reviewers
recommend --format hotcrp`."""

from __future__ import annotations

import csv
import io
import json

import pytest

from scholargraph.conference.exchange import Pair, export, hotcrp_preference
from scholargraph.ingest.hotcrp import hotcrp_conflict, read_papers, upload_type, write_conflicts

HOTCRP_COMMIT = "0f25da6c453c5cd9b869ae4f6bafdd0aee4b885e"  # kohler/hotcrp, 2026-08-22

# src/init.php lines 17-20.
CONFLICT_MAXUNCONFLICTED, CONFLICT_AUTHOR, CONFLICT_CONTACTAUTHOR = 1, 32, 64
# src/conflict.php lines 15-17 and 30-37.
CT_DEFAULT, CT_GENERIC = 2, 30
JSON_MAP = {2: "collaborator", 4: "advisor", 6: "institutional", 8: "personal", 10: "other", 28: "administrative"}


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


def upload_conflict(cell: str | None) -> int | None:
    """src/assigners/a_conflict.php Conflict_AssignmentParser::apply, lines 99-110, for action `conflict`: the
    conflict the row sets, or None where HotCRP answers "Conflict type ... not found". The cell is the
    `conflict` column (src/assignmentset.php line 1559: `conflicttype` is its synonym); an empty cell is "",
    not absent (lib/csv.php parse_comma lines 670-712 keeps a trailing empty field; CsvRow::offsetGet lines
    31-41 returns it), so only a file without the column gets the default "on"."""
    text = cell if cell is not None else "on"
    if ":" in text:
        text = text[text.index(":") + 1:]
    ct = parse_assignment(text)
    if ct is None or ct >= CONFLICT_AUTHOR:  # Conflict::is_author, src/conflict.php lines 46-48
        return None
    return ct


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
    # The type written back sets the PC conflict HotCRP exported: the same type, pinned staying pinned.
    for ct in range(2, 32):
        value = unparse_json(ct, desc=True)
        assert isinstance(value, str)
        written = upload_type(hotcrp_conflict(value))
        if ct & 30 == 0:
            assert written is None, value  # "pinned unconflicted": no conflict to write
        else:
            assert written is not None and upload_conflict(written) == ct, (value, written)
    assert hotcrp_conflict("shared office") is None and upload_type(hotcrp_conflict(True)) == "yes"


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

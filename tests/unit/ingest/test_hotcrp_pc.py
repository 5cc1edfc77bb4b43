"""HotCRP's PC info CSV: read (bad files refused with the line), matched to graph authors, stored idempotently."""

from __future__ import annotations

import csv
import re

import pytest

from scholargraph.errors import UsageError
from scholargraph.graph.memory_store import InMemoryStore
from scholargraph.graph.records import Author, Authorship, Paper, PaperBundle
from scholargraph.ingest.hotcrp import PcMember, match_pc, read_pc_list, store_pc_details, write_pool

HEADER = "first,last,email,roles,tags,affiliation,collaborators,follow\n"


def graph() -> InMemoryStore:
    store = InMemoryStore()
    people = [("s2author:1", "José Pérez"), ("s2author:2", "Ann Lee"), ("s2author:3", "Ann Lee"),
              ("name:bo_chen", "Bo Chen")]
    store.write_bundles([PaperBundle(Paper(id=f"p{i}", title="t"), authors=(Author(aid, name),),
                                     authorships=(Authorship(aid, f"p{i}", 1),))
                         for i, (aid, name) in enumerate(people)])
    return store


def test_members_are_matched_by_email_then_name(tmp_path):
    pc = tmp_path / "pc.csv"
    pc.write_text(HEADER + "Jose,Perez,Jose@CMU.edu,pc,,Carnegie Mellon University,,reviews\n"
                  "Ann,Lee,ann@x.org,pc,,,,\n"
                  "Bo,Chen,bo@y.org,pc,,,,\n"
                  "Cy,Doe,cy@z.org,pc,,,,\n")
    members = read_pc_list(str(pc))
    store = graph()
    match = match_pc(store, members)
    assert sorted(match.matched) == ["name:bo_chen", "s2author:1"]
    assert [m.name for m, _ in match.ambiguous] == ["Ann Lee"] and [m.name for m in match.unmatched] == ["Cy Doe"]
    assert store_pc_details(store, match, year=2025) == 2
    store_pc_details(store, match, year=2025)  # again: nothing changes
    ids, props = store.read_nodes("Author", ["emails", "affiliations"])
    assert props["emails"][ids.index("s2author:1")] == ["jose@cmu.edu"]
    assert props["affiliations"][ids.index("s2author:1")] == ["2025-|Carnegie Mellon University"]
    # Next time the email finds the author, whatever name the list gives.
    renamed = tmp_path / "renamed.csv"
    renamed.write_text(HEADER + "J.,P.,jose@cmu.edu,pc,,,,\n")
    assert list(match_pc(store, read_pc_list(str(renamed))).matched) == ["s2author:1"]
    lines = match.lines(str(pc))
    assert "1 matched no author" in lines[1] and not any("@" in line for line in lines)
    write_pool(match, tmp_path / "pool.txt")
    assert (tmp_path / "pool.txt").read_text().split() == ["name:bo_chen", "s2author:1"]


@pytest.mark.parametrize("text, where", [
    ("name,affiliation\nAnn,CMU\n", ":1: expected the columns"),
    (HEADER + "Ann,Lee,,pc,,,,\n", ":2: no email"),
    (HEADER, "holds no PC members"),
])
def test_bad_lists_are_refused_with_the_line(tmp_path, text, where):
    pc = tmp_path / "pc.csv"
    pc.write_text(text)
    with pytest.raises(UsageError, match=where):
        read_pc_list(str(pc), "hotcrp-pc")


# HotCRP's PC downloads, as kohler/hotcrp writes them at commit 0f25da6c453c5cd9b869ae4f6bafdd0aee4b885e:
# src/pages/p_users.php handle_pcinfo, lines 163-191 (given_name,family_name,email,affiliation, then orcid,
# country, phone, disabled, preferred_email when some member has one, roles, tags when some member has them,
# collaborators, follow, and "topic: NAME" per topic), and handle_nameemail, lines 85-91 (given_name,
# family_name,email,affiliation[,country][,orcid]). Before 2024-09-29 (commit 6e4d7d819) both began first,last.
def pcinfo_header(orcid=False, country=False, phone=False, disabled=False, preferred=False, tags=False,
                  topics=()) -> list[str]:
    header = ["given_name", "family_name", "email", "affiliation"]
    header += [name for name, present in (("orcid", orcid), ("country", country), ("phone", phone),
                                          ("disabled", disabled), ("preferred_email", preferred)) if present]
    header.append("roles")
    if tags:
        header.append("tags")
    header += ["collaborators", "follow"]
    return header + [f"topic: {t}" for t in topics]


def nameemail_header(country=False, orcid=False) -> list[str]:
    return ["given_name", "family_name", "email", "affiliation"] + ["country"] * country + ["orcid"] * orcid


@pytest.mark.parametrize("header", [
    pcinfo_header(),
    pcinfo_header(orcid=True, country=True, phone=True, disabled=True, preferred=True, tags=True,
                  topics=("Graphs", "Machine learning")),
    nameemail_header(),
    nameemail_header(country=True, orcid=True),
    ["first", "last", "email", "roles", "tags", "affiliation", "collaborators", "follow"],  # before 2024-09
    ["first", "last", "email", "affiliation"],
], ids=["pcinfo", "pcinfo-every-column", "names-and-emails", "names-and-emails-every-column", "old-pcinfo",
        "old-names-and-emails"])
def test_every_pc_download_hotcrp_writes_is_read(tmp_path, header):
    values = {"given_name": "Ann", "first": "Ann", "family_name": "Lee", "last": "Lee", "email": "Ann@X.org",
              "affiliation": "Uni X", "collaborators": "Bo Chen (Uni Y)\nCy Doe (Uni Z)", "roles": "pc"}
    pc = tmp_path / "pc.csv"
    with open(pc, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerow([values.get(column, "") for column in header])
    [member] = read_pc_list(str(pc))
    assert (member.line, member.name, member.email, member.affiliation) == (2, "Ann Lee", "ann@x.org", "Uni X")


def test_a_saved_spreadsheet_is_read_header_case_bom_and_crlf(tmp_path):
    # What Excel writes back: a UTF-8 BOM, CRLF line ends, the header as someone retyped it.
    pc = tmp_path / "pc.csv"
    pc.write_bytes("\ufeffGiven_Name,Family_Name,EMAIL,Affiliation,Extra\r\nAnn,Lee,ann@x.org,Uni X,1\r\n"
                   .encode("utf-8"))
    [member] = read_pc_list(str(pc))
    assert (member.name, member.email, member.affiliation) == ("Ann Lee", "ann@x.org", "Uni X")


def test_each_member_keeps_the_line_it_starts_on(tmp_path):
    # A PC info download quotes multi-line collaborators; the lines named (errors, repeats) are an editor's.
    pc = tmp_path / "pc.csv"
    pc.write_text('given_name,family_name,email,collaborators\nAnn,Lee,ann@x.org,"Bo Chen (Y)\nCy Doe (Z)"\n'
                  'Bo,Chen,bo@y.org,\nCy,Doe,,\n')
    with pytest.raises(UsageError, match=r"pc.csv:5: no email"):
        read_pc_list(str(pc))
    pc.write_text('given_name,family_name,email,collaborators\nAnn,Lee,ann@x.org,"Bo Chen (Y)\nCy Doe (Z)"\n'
                  'Bo,Chen,bo@y.org,\n')
    assert [m.line for m in read_pc_list(str(pc))] == [2, 4]


def test_a_member_without_a_name_is_kept_and_matched_by_email(tmp_path):
    # One such row refused the whole PC list (exit 2), though match_pc finds a member by email first.
    pc = tmp_path / "pc.csv"
    pc.write_text(HEADER + ",,Jose@CMU.edu,pc,,CMU,,\nAnn,Lee,ann@x.org,pc,,,,\n,,nobody@z.org,pc,,,,\n")
    members = read_pc_list(str(pc), "hotcrp-pc")
    assert [(m.line, m.name, m.email) for m in members] == [(2, "", "jose@cmu.edu"), (3, "Ann Lee", "ann@x.org"),
                                                            (4, "", "nobody@z.org")]
    store = graph()
    store_pc_details(store, match_pc(store, [PcMember(1, "José Pérez", "jose@cmu.edu", None)]))  # an email known
    match = match_pc(store, members)
    assert list(match.matched) == ["s2author:1"] and [m.line for m in match.nameless] == [2, 4]
    lines = match.lines(str(pc))
    assert "2 members without a name (given_name, family_name or name): matched by email only, e.g. line 2, " \
           "line 4" in lines
    assert "1 matched no author of the graph (left out), e.g. line 4 (no name)" in lines
    assert [m.name for m, _ in match.ambiguous] == ["Ann Lee"] and not any("@" in line for line in lines)


def test_a_member_listed_twice_is_kept_once_by_the_reader(tmp_path):
    # The repeat rule of every user file (user_files.Repeats), now in the reader rather than in ingest/cli.py.
    pc = tmp_path / "pc.csv"
    pc.write_text(HEADER + "Ann,Lee,ann@x.org,pc,,Uni,,\nBo,Chen,bo@y.org,pc,,,,\nAnn,Lee,ANN@x.org,pc,,Uni,,\n")
    said: list[str] = []
    assert [m.line for m in read_pc_list(str(pc), "hotcrp-pc", said.append)] == [2, 3]
    [warning] = said
    assert re.fullmatch(rf"warning: hotcrp-pc {re.escape(str(pc))}: 1 repeated PC member.* kept once, e\.g\. line 4 "
                        r"\(as line 2\)", warning), warning
    pc.write_text(HEADER + "Ann,Lee,ann@x.org,pc,,Uni,,\nAnn,Lee,ann@x.org,pc,,Other Uni,,\n")
    with pytest.raises(UsageError, match=r"pc.csv:3: the PC member.* of line 2 again, with another value"):
        read_pc_list(str(pc), "hotcrp-pc")

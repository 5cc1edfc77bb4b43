"""HotCRP's PC info CSV: read (bad files refused with the line), matched to graph authors, stored idempotently."""

from __future__ import annotations

import pytest

from scholargraph.errors import UsageError
from scholargraph.graph.memory_store import InMemoryStore
from scholargraph.graph.records import Author, Authorship, Paper, PaperBundle
from scholargraph.ingest.hotcrp import match_pc, read_pc_list, store_pc_details, write_pool

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
    (HEADER + ",,ann@x.org,pc,,,,\n", ":2: no name"),
    (HEADER, "holds no PC members"),
])
def test_bad_lists_are_refused_with_the_line(tmp_path, text, where):
    pc = tmp_path / "pc.csv"
    pc.write_text(text)
    with pytest.raises(UsageError, match=where):
        read_pc_list(str(pc), "hotcrp-pc")

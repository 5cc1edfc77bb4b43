"""The chair's tools without a server: each export read back with its documented columns, each declared
conflicts layout detected, and declared pairs never assigned nor suggested."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET

import pytest

from scholargraph.conference.assignment.plan import AssignmentRequest
from scholargraph.conference.declared import (
    HOTCRP,
    HOTCRP_PC_CONFLICTS,
    OPENREVIEW,
    PAIRS,
    read_declared,
)
from scholargraph.conference.exchange import (
    EmailBook,
    Pair,
    export,
    hotcrp_preference,
    read_email_file,
    unscored_path,
)
from scholargraph.errors import UsageError
from scholargraph.ranking.reviewers import service
from scholargraph.ranking.reviewers.assign import plan_assignment
from scholargraph.ranking.reviewers.reco_rank import RecoRank

from .test_rev_service import world as service_world

PAIRS_OUT = [Pair("p1", "s2author:1", "s2author:1", 0.8125), Pair("p1", "2", "s2author:2", None),
             Pair("p2", "3", "s2author:3", -0.5)]
EMAILS = {"s2author:1": "ann@uni.edu", "s2author:2": "bo@lab.org"}


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


# --- the exports --------------------------------------------------------------------------------------------


def test_openreview_scores_are_the_matchers_headerless_paper_profile_score_rows():
    done = export("openreview", "scores", PAIRS_OUT)
    rows = _rows(done.text)
    assert rows == [["p1", "s2author:1", "0.812500"], ["p2", "3", "-0.500000"]]  # no header: row 1 is data
    assert done.no_score == ["p1 2"] and done.no_email == []  # no email needed; the unscored pair is listed
    assert any("1 pair(s) have no score" in line and "p1 2" in line for line in done.warnings("openreview"))


def test_openreview_assignment_leaves_a_pair_without_affinity_to_a_side_file():
    # OpenReview reads a number in every row (float(row[2])): an empty cell is no score it accepts.
    done = export("openreview", "assignment", PAIRS_OUT)
    assert _rows(done.text) == [["p1", "s2author:1", "0.812500"], ["p2", "3", "-0.500000"]]
    assert _rows(done.unscored_rows) == [["p1", "2"]] and done.no_score == ["p1 2"]
    assert any(line.startswith("openreview: 1 assigned pair(s) have no affinity (no eligible evidence) and are left "
                               "out of the file") and "p1 2" in line for line in done.warnings("openreview"))
    assert unscored_path("out/assign.csv") == "out/assign.no-affinity.csv"


def test_openreview_ids_are_bare_as_openreview_has_them():
    pairs = [Pair("openreview:sub1", "openreview:~Abe_Roberts1", "openreview:~Abe_Roberts1", 0.5),
             Pair("sub2", "~Abe_Roberts1", "openreview:~Abe_Roberts1", None),
             Pair("sub2", "s2author:7", "s2author:7", 0.25)]
    for what in ("scores", "assignment"):
        done = export("openreview", what, pairs)
        assert _rows(done.text) == [["sub1", "~Abe_Roberts1", "0.500000"], ["sub2", "s2author:7", "0.250000"]]
        # A reviewer who is no OpenReview profile is named, with the count: OpenReview does not know them.
        assert done.not_profiles == ["s2author:7"]
        assert any("1 reviewer(s) have no OpenReview profile id" in line for line in done.warnings("openreview"))
    assert _rows(export("openreview", "assignment", pairs).unscored_rows) == [["sub2", "~Abe_Roberts1"]]


def test_hotcrp_preferences_parse_with_hotcrps_columns():
    done = export("hotcrp", "scores", PAIRS_OUT, EMAILS)
    header, *rows = _rows(done.text)
    assert header == ["paper", "action", "email", "preference"]
    assert rows == [["p1", "pref", "ann@uni.edu", "16"]]  # 0.8125 x 20, HotCRP's typical -20..20
    # A reviewer without an email is left out and named, never written with a blank cell.
    assert done.no_email == ["p2 3"] and done.no_score == ["p1 2"]
    assert hotcrp_preference(3.0) == 20 and hotcrp_preference(-2.0) == -20  # never -100: a conflict to HotCRP


def test_hotcrp_assignment_is_a_bulk_upload_of_primary_reviews():
    done = export("hotcrp", "assignment", PAIRS_OUT, EMAILS)
    header, *rows = _rows(done.text)
    assert header == ["paper", "action", "email"]
    assert rows == [["p1", "primary", "ann@uni.edu"], ["p1", "primary", "bo@lab.org"]]
    assert done.no_email == ["p2 3"]
    assert any("no known email" in line and "p2 3" in line for line in done.warnings("hotcrp"))


def test_cmt_assignment_is_its_import_xml_and_its_scores_a_tab_table():
    done = export("cmt", "assignment", PAIRS_OUT, EMAILS)
    root = ET.fromstring(done.text.split("\n", 1)[1])
    [submission] = root.findall("submission")
    assert submission.get("submissionId") == "p1"
    assert [u.get("email") for u in submission.findall("user")] == ["ann@uni.edu", "bo@lab.org"]
    scores = export("cmt", "scores", PAIRS_OUT, EMAILS).text.split("\n")
    assert scores[0] == "# Paper ID\tEmail\tScore" and scores[1:] == ["p1\tann@uni.edu\t0.812500"]


def test_emails_come_from_the_nodes_and_a_file_and_the_file_wins(tmp_path):
    listed = tmp_path / "emails.csv"
    listed.write_text("reviewer_id,email\nb@ex.org,s2author:2\n1,Ann@Other.edu\nghost,g@x.org\n", encoding="utf-8")
    rows = read_email_file(str(listed))
    assert rows == [("s2author:2", "b@ex.org"), ("1", "ann@other.edu"), ("ghost", "g@x.org")]
    book = EmailBook.build([("s2author:1", ["ann@uni.edu"]), ("s2author:3", None)], rows,
                           lambda given: {g: f"s2author:{g.split(':')[-1]}" for g in given if g != "ghost"})
    assert book.email == {"s2author:1": "ann@other.edu", "s2author:2": "b@ex.org"}
    assert book.node_of("ANN@uni.edu") == "s2author:1" and book.node_of("nobody@x.org") is None
    assert "1 reviewer id(s) are not in the graph" in str(book.warning())
    bad = tmp_path / "bad.csv"
    bad.write_text("reviewer_id,email\n1,2\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"--emails .*bad.csv:2: expected `reviewer_id,email`"):
        read_email_file(str(bad))


# --- declared conflicts in --------------------------------------------------------------------------------


def test_each_tools_conflict_file_is_recognised(tmp_path):
    def read(text: str, **kw):
        path = tmp_path / "c.csv"
        path.write_text(text, encoding="utf-8")
        return read_declared(str(path), "--conflicts", **kw)

    o = read("e1,X,-1\ne1,J,1\nx1,E,0\n")
    assert o.layout == OPENREVIEW and [(p.paper, p.reviewer) for p in o.conflicts] == [("e1", "X")]
    assert [(p.paper, p.reviewer) for p in o.forced] == [("e1", "J")] and o.other_rows == 1
    assert o.conflicts[0].reason == "declared (openreview)" and "OpenReview constraints" in o.describe()
    h = read("paper,action,email,conflict type\ne1,conflict,x@uni.edu,advisor\ne1,primary,j@uni.edu,\n"
             "x1,conflict,e@uni.edu,no\no1,conflict,n@uni.edu,\n")
    assert h.layout == HOTCRP and [(p.paper, p.reviewer, p.reason) for p in h.conflicts] == [
        ("e1", "x@uni.edu", "declared (hotcrp: advisor)"), ("o1", "n@uni.edu", "declared (hotcrp)")]
    assert h.other_rows == 2 and h.has_emails
    pc = read("paper,title,first,last,email,conflicttype\ne1,\"A, title\",Xu,Li,x@uni.edu,Institutional\n")
    assert pc.layout == HOTCRP_PC_CONFLICTS and pc.conflicts[0].reason == "declared (hotcrp: institutional)"
    plain = read("paper reviewer\ne1 X\n", plain="forced")
    assert plain.layout == PAIRS and [(p.paper, p.reviewer) for p in plain.forced] == [("e1", "X")]
    with pytest.raises(UsageError, match=r"c.csv:2: expected OpenReview's `paper,profile,-1\|0\|1`"):
        read("e1,X,-1\ne1,J,7\n")
    with pytest.raises(UsageError, match=r"c.csv:2: a conflict row without the reviewer's email"):
        read("paper,action,email\ne1,conflict,\n")


# --- declared conflicts applied ---------------------------------------------------------------------------


POOL = ["E", "X", "J", "O", "N", "E2"]


@pytest.fixture(scope="module")
def tiny():
    from scholargraph.ranking.reviewers.evidence import EvidenceIndex

    from .conftest import tiny_world

    snap, text, topics, cvec = tiny_world()
    index = EvidenceIndex(snap, text, topics, cvec, background=30, seed=0)
    return index, RecoRank(self_supervised=30, reviewer_centric=10, steps=20, recent_years=6).fit(index)


@pytest.mark.parametrize("layout", ["openreview", "hotcrp", "hotcrp pc conflicts", "pairs"])
def test_the_assignment_never_assigns_a_declared_pair(tiny, tmp_path, layout):
    index, model = tiny
    pool = tmp_path / "pool.txt"
    pool.write_text("\n".join(POOL), encoding="utf-8")
    emails = tmp_path / "emails.csv"
    emails.write_text("".join(f"{r},{r.lower()}@uni.edu\n" for r in POOL), encoding="utf-8")

    def plan(**files):
        request = AssignmentRequest(paper_ids=["e1", "x1"], pool_file=str(pool), per_paper=2, max_load=2,
                                    emails_file=str(emails), **files)
        return plan_assignment(None, tmp_path, request, index=index, model_and_meta=(model, {"version": "t"}))

    before = {(r["paper"], r["reviewer"]) for r in plan().rows()}
    paper, reviewer = sorted(before)[0]
    mail = f"{reviewer.lower()}@uni.edu"
    text = {"openreview": f"{paper},{reviewer},-1\n",
            "hotcrp": f"paper,action,email\n{paper},conflict,{mail}\n{paper},conflict,ghost@nowhere.org\n",
            "hotcrp pc conflicts": f"paper,title,first,last,email,conflicttype\n{paper},T,A,B,{mail},Advisor\n",
            "pairs": f"{paper} {reviewer}\n"}[layout]
    conflicts = tmp_path / "conflicts.csv"
    conflicts.write_text(text, encoding="utf-8")
    warnings: list[str] = []
    request = AssignmentRequest(paper_ids=["e1", "x1"], pool_file=str(pool), per_paper=2, max_load=2,
                                emails_file=str(emails), conflicts_file=str(conflicts))
    after = plan_assignment(None, tmp_path, request, index=index, model_and_meta=(model, {"version": "t"}),
                            warn=warnings.append)
    assert (paper, reviewer) not in {(r["paper"], r["reviewer"]) for r in after.rows()}
    assert len(after.rows()) == len(before)
    [note] = [n for n in after.table.notes if n.startswith("declared conflicts ruled out")]
    assert note.startswith("declared conflicts ruled out: 1 (submission, reviewer) pair(s): declared (")
    if layout == "hotcrp":  # an email nobody has is reported, not dropped silently
        assert any("1 pair(s) name a reviewer (id or email) the graph does not know" in w
                   and f"{paper} (the email of line 3)" in w and "ghost" not in w for w in warnings)


def test_an_openreview_constraints_file_forces_its_plus_ones_through_force(tiny, tmp_path):
    index, model = tiny
    pool = tmp_path / "pool.txt"
    pool.write_text("\n".join(POOL), encoding="utf-8")
    constraints = tmp_path / "constraints.csv"
    constraints.write_text("e1,N,1\ne1,X,-1\n", encoding="utf-8")
    request = AssignmentRequest(paper_ids=["e1"], pool_file=str(pool), per_paper=2, max_load=2,
                                force_file=str(constraints))
    rows = plan_assignment(None, tmp_path, request, index=index, model_and_meta=(model, {"version": "t"})).rows()
    assigned = {r["reviewer"] for r in rows}
    assert "N" in assigned and "X" not in assigned and [r["forced"] for r in rows if r["reviewer"] == "N"] == [True]


def test_recommend_never_suggests_a_declared_pair(tmp_path_factory):
    store, models = service_world(), tmp_path_factory.mktemp("models")
    service.train(store, models, min_papers=2, training_queries=10, steps=10)
    _, meta = service.load_model(models)
    index = service.index_for_model(store, models, meta, True)

    def suggested(**kw) -> list[str]:
        warnings: list[str] = []
        [(_, sugg)], _ = service.recommend(None, models, paper_ids=["a0-2004"], k=4, index=index,
                                           warn=warnings.append, **kw)
        return [s.reviewer_id for s in sugg], warnings

    before, _ = suggested()
    top = before[0]
    path = tmp_path_factory.mktemp("declared") / "c.csv"
    path.write_text(f"paper,action,email\na0-2004,conflict,{top}@uni.edu\na0-2004,conflict,who@x.org\n",
                    encoding="utf-8")
    declared = [read_declared(str(path), "--conflicts")]
    book = EmailBook.build([(top, [f"{top}@uni.edu"])])
    after, warnings = suggested(declared=declared, emails=book)
    assert top not in after and len(after) == 4 and after[:3] == before[1:4]
    assert any(w.startswith("declared conflicts: 1 (submission, reviewer) pair(s) are never suggested: "
                            "declared (hotcrp) 1") for w in warnings)
    assert any("a0-2004 (the email of line 3)" in w and "does not know" in w for w in warnings)
    assert not any("@" in w for w in warnings)  # no email is echoed

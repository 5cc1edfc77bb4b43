"""What `--format openreview` writes, read by openreview-py's own score-file code: `Matching._build_scores_from_file`
of openreview/venue/matching.py (openreview-py 2.9.1, the test dependency; the same code at openreview/openreview-py
e25fd7da055e7ae3435df51dbdadf2760c59d281, lines 490-496 and 545-575). It is the narrowest entry point of a venue's
matching setup that reads a score file: `Matching.setup(compute_affinity_scores=FILE)` calls it (line 1044) after
fetching the committee's profiles and submissions from the API. Only the HTTP API is stubbed: the venue, the
matching and the edges are openreview-py's own objects, and scholargraph's output is what the CLI writes. The stub
and the upload are tests/openreview_api.py's (tests/integration/test_openreview_session_cli.py runs them too)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scholargraph.conference import exchange
from scholargraph.ranking.reviewers.reco_rank import RecoRank
from tests.openreview_api import VENUE_ID, upload_scores

from .test_assign_service import assign_a_forced_pair_without_evidence


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "affinity.csv"
    path.write_text(text + "\n", encoding="utf-8")  # what emit_text writes to --out
    return path


def test_recommend_scores_post_edges_to_bare_profile_ids(tmp_path):
    # recommend prints a reviewer in the form the --pool gave it: here qualified, as the graph has it.
    pairs = [exchange.Pair("sub1", "openreview:~Abe_Roberts1", "openreview:~Abe_Roberts1", 0.8125),
             exchange.Pair("openreview:sub2", "~Cy_Doe1", "openreview:~Cy_Doe1", 0.25),
             exchange.Pair("sub2", "openreview:~Abe_Roberts1", "openreview:~Abe_Roberts1", None)]
    done = exchange.export("openreview", "scores", pairs)
    api = upload_scores(write(tmp_path, done.text), ["sub1", "sub2"])
    assert [(e.head, e.tail, e.weight) for e in api.posted] == [("sub1", "~Abe_Roberts1", 0.8125),
                                                                 ("sub2", "~Cy_Doe1", 0.25)]
    assert [e.readers for e in api.posted] == [[VENUE_ID, "~Abe_Roberts1"], [VENUE_ID, "~Cy_Doe1"]]


@pytest.fixture(scope="module")
def tiny():
    from scholargraph.ranking.reviewers.evidence import EvidenceIndex

    from .conftest import tiny_world

    snap, text, topics, cvec = tiny_world()
    index = EvidenceIndex(snap, text, topics, cvec, background=30, seed=0)
    return index, RecoRank(self_supervised=30, reviewer_centric=10, steps=20, recent_years=6).fit(index)


def test_an_assignment_with_a_forced_pair_without_evidence_uploads(tiny, tmp_path, capsys):
    """x0 is of 2012 and J's only paper of 2019: judged up to the submission's year, J has no evidence, so the
    forced pair (x0, J) has no affinity. openreview-py refused the empty cell written for it (`could not convert
    string to float: ''`); it is left out of the file now, and kept beside it."""
    from scholargraph.ranking.reviewers.cli import _export

    index, model = tiny
    outcome = assign_a_forced_pair_without_evidence(index, model, tmp_path)
    rows = outcome.rows()
    assert [(r["reviewer"], r["affinity"] is None, r["forced"]) for r in rows] == [("E", False, False),
                                                                                    ("J", True, True)]
    # The pairs as `reviewers assign --format openreview --out FILE` builds and writes them.
    pairs = [exchange.Pair(r["paper"], r["reviewer"], r["reviewer"], r["affinity"]) for r in rows]
    out = tmp_path / "assign.csv"
    _export("openreview", "assignment", pairs, None, str(out), [])
    api = upload_scores(out, ["x0"])
    assert [(e.head, e.tail, e.weight) for e in api.posted] == [("x0", "E", round(rows[0]["affinity"], 4))]
    side = tmp_path / "assign.no-affinity.csv"
    assert side.read_text(encoding="utf-8") == "x0,J\n"
    said = capsys.readouterr().err
    assert "openreview: 1 assigned pair(s) have no affinity (no eligible evidence)" in said and "x0 J" in said
    assert str(side) in said


@pytest.mark.parametrize("what", ["scores", "assignment"])
def test_no_file_when_no_pair_has_a_score(tmp_path, capsys, what):
    """Every suggestion unscored wrote a file holding one blank line. openreview-py takes no such file well: a blank
    row fails `_build_profile_scores` (`row[2]`, an IndexError), and `_build_note_scores` (as any file without a
    score row) deletes the venue's affinity scores and posts none. So no file is written: one line, exit 2."""
    from scholargraph.errors import UsageError
    from scholargraph.ranking.reviewers.cli import _export

    api = upload_scores(write(tmp_path, ""), ["sub1"])  # what the blank file did to a venue: its scores gone
    assert api.deleted and not api.posted
    capsys.readouterr()  # openreview-py prints its progress
    pairs = [exchange.Pair("sub1", "~Abe_Roberts1", "openreview:~Abe_Roberts1", None),
             exchange.Pair("sub1", "~Cy_Doe1", "openreview:~Cy_Doe1", None)]
    out = tmp_path / "out.csv"
    for given in (pairs, []):
        with pytest.raises(UsageError) as refused:
            _export("openreview", what, given, None, str(out), [])
        assert refused.value.exit_code == 2 and "\n" not in str(refused.value)
        assert "no file written" in str(refused.value)
        assert not out.exists() and not (tmp_path / "out.no-affinity.csv").exists()
        assert capsys.readouterr().out == ""  # nor anything on stdout, where the file goes without --out
    with pytest.raises(UsageError, match=r"none of the 2 .* has a score \(no eligible evidence: e\.g\. sub1 "
                                         r"~Abe_Roberts1, sub1 ~Cy_Doe1\)"):
        exchange.export("openreview", what, pairs)

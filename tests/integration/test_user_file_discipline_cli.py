"""The input discipline of tests/unit/test_user_file_discipline.py where the reading happens in a command that needs
Neo4j: a file saved by Excel (a byte-order mark, CRLF, a header in capitals, a row twice) gives what the clean file
gives (`ingest hotcrp-pc`, `reviewers conflicts --pool`), and a PC list that applies to nothing of the run exits 2
with one line unless --allow-empty. `reviewers assign --conflicts` with an Excel file and with one that applies to
nothing is in the HotCRP chair's session (test_hotcrp_session_cli.py); `recommend --conflicts` in
tests/unit/test_user_file_discipline.py."""

from __future__ import annotations

import csv
import io
import json

from scholargraph.graph.records import Author, Authorship, Paper, PaperBundle
from tests.cli import run as cli
from tests.conftest import cli_env, open_test_store

BOM = "\ufeff"


def excel(path, lines: list[str], twice: int | None = None) -> str:
    """`lines` as Excel saves a CSV: a byte-order mark, CRLF, the header in capitals; lines[twice] again at the end."""
    rows = [lines[0].upper() if "," in lines[0] else lines[0], *lines[1:]]
    rows += [lines[twice]] if twice is not None else []
    path.write_bytes((BOM + "\r\n".join(rows) + "\r\n").encode("utf-8"))
    return str(path)


def plain(path, lines: list[str]) -> str:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def bundles() -> list[PaperBundle]:
    """Ann Lee and Xi Yu wrote p1 together; Bo Chen wrote p2."""
    people = {"s2author:1": "Ann Lee", "s2author:2": "Xi Yu", "s2author:3": "Bo Chen"}
    out = []
    for pid, ids in (("s2:p1", ["s2author:1", "s2author:2"]), ("s2:p2", ["s2author:3"])):
        authors = tuple(Author(a, people[a], sources=(a,)) for a in ids)
        out.append(PaperBundle(paper=Paper(pid, f"Reviewer graphs {pid}", abstract="ranking reviewers", year=2020,
                                           sources=(pid,)),
                               authors=authors, authorships=tuple(Authorship(a, pid, k) for k, a in
                                                                  enumerate(ids, 1))))
    return out


def test_an_excel_pc_list_and_pool_read_as_the_clean_files(neo4j_settings, tmp_path):
    env = cli_env(neo4j_settings, tmp_path / "home")
    pc = ["first,last,email,roles,affiliation", "Ann,Lee,ann@uni.edu,pc,Uni A", "Xi,Yu,xi@uni.edu,pc,Uni B"]
    with open_test_store(neo4j_settings) as store:
        store.apply_schema()
        store.reset()
        try:
            store.write_bundles(bundles())
            clean = cli(env, "ingest", "hotcrp-pc", plain(tmp_path / "pc.csv", pc))
            assert "2 PC members read" in clean.stdout and "PC members: 2 matched" in clean.stdout
            # Excel's: the first column was lost to the BOM (0 matched), and Ann's second row counted too.
            path = excel(tmp_path / "pc-excel.csv", pc, twice=1)
            done = cli(env, "ingest", "hotcrp-pc", path, "--pool-out", str(tmp_path / "pool.txt"))
            assert done.stdout.replace(path, "PATH") == clean.stdout.replace(str(tmp_path / "pc.csv"), "PATH") + \
                f"  pool: 2 ids written to {tmp_path / 'pool.txt'} (reviewers recommend|assign --pool)\n"
            assert done.stderr == (f"scholargraph: warning: hotcrp-pc {path}: 1 repeated PC member (by email) kept "
                                   f"once, e.g. line 4 (as line 2)\n")

            # A PC list that matches nobody changes nothing: exit 2 with one line, unless --allow-empty.
            nobody = plain(tmp_path / "nobody.csv", ["first,last,email", "No,Body,nobody@example.org"])
            refused = cli(env, "ingest", "hotcrp-pc", nobody, check=False)
            assert refused.returncode == 2 and refused.stderr == (
                f"scholargraph: hotcrp-pc {nobody}: none of its 1 PC member(s) applies to this run: it changes "
                f"nothing; check its ids, or give --allow-empty to go on\n")
            allowed = cli(env, "ingest", "hotcrp-pc", nobody, "--allow-empty")
            assert "(--allow-empty)" in allowed.stderr and "PC members: 0 matched" in allowed.stdout

            # The pool's first reviewer was lost to the BOM: Ann, the submission's author, went unreported.
            sub = plain(tmp_path / "sub.jsonl", [json.dumps({"id": "S1", "title": "t", "author_ids": ["s2author:1"]})])
            ids = ["s2author:1", "s2author:2", "s2author:3"]
            runs = [cli(env, "reviewers", "conflicts", "--queries", sub, "--pool", pool, "--format", "csv")
                    for pool in (plain(tmp_path / "ids.txt", ids), excel(tmp_path / "ids-excel.txt", ids, twice=0))]
            clean_rows, excel_rows = ([(r["reviewer"], r["reason"].split()[0]) for r in
                                       csv.DictReader(io.StringIO(run.stdout))] for run in runs)
            assert excel_rows == clean_rows == [("s2author:1", "author"), ("s2author:2", "coauthor")]
            assert "1 repeated id kept once, e.g. line 4 (as line 1)" in runs[1].stderr
        finally:
            store.reset()

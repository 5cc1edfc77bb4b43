"""A HotCRP chair's session through the real CLI and Neo4j: the PC info CSV and the paper JSON downloads in
(`ingest hotcrp-pc`, `ingest hotcrp-papers`), then `reviewers assign --format hotcrp` with the papers' declared
conflicts: no PC member is assigned a paper whose new authors share their email domain or institution, or that
declared them, or that they wrote; the withdrawn paper is not assigned; no email is printed outside the upload
file. The downloads are in HotCRP's current forms (kohler/hotcrp 0f25da6c): the PC info CSV headed
given_name,family_name (src/pages/p_users.php handle_pcinfo), as a spreadsheet saves it (a byte-order mark, CRLF),
and authors written given_name/family_name (src/author.php unparse_nea_json_for)."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

import pytest

from scholargraph.graph.records import fold_name
from tests.cli import run as cli
from tests.conftest import cli_env, open_test_store
from tests.integration.test_assign_cli import trained_synth_graph


@pytest.mark.long(reason="a trained synthetic graph through the CLI")
def test_hotcrp_downloads_to_an_assignment(neo4j_settings, tmp_path):
    env = cli_env(neo4j_settings, tmp_path / "home")
    with open_test_store(neo4j_settings) as store:
        store.apply_schema()
        store.reset()
        try:
            corpus = trained_synth_graph(env, tmp_path, 200)
            records = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
            ids, props = store.read_nodes("Author", ["name"])
            counts = Counter(fold_name(n) for n in props["name"] if n)
            names = sorted(n for n in props["name"] if n and " " in n and counts[fold_name(n)] == 1)
            # Four PC members the graph knows, by name; the first shares its email domain with a new author,
            # the third its institution, the fourth is declared by the paper (pc_conflicts).
            pc_rows = [(names[0], "pc0@cs.uni-a.edu", "Uni A"), (names[1], "pc1@uni-b.edu", "Uni B"),
                       (names[2], "pc2@gmail.com", "University of C"), (names[3], "pc3@uni-d.org", "Uni D")]
            pc = tmp_path / "pcinfo.csv"
            rows = [f"{n.rsplit(' ', 1)[0]},{n.rsplit(' ', 1)[1]},{e},{a},pc,,reviews" for n, e, a in pc_rows]
            pc.write_bytes(("\ufeffgiven_name,family_name,email,affiliation,roles,collaborators,follow\r\n"
                            + "".join(r + "\r\n" for r in [*rows, rows[1]])).encode("utf-8"))  # pc1 listed twice
            done = cli(env, "ingest", "hotcrp-pc", str(pc), "--pool-out", str(tmp_path / "pool.txt"))
            assert "PC members: 4 matched" in done.stdout and "@" not in done.stdout + done.stderr
            assert "1 repeated PC member" in done.stderr and "line 6 (as line 3)" in done.stderr
            pool = (tmp_path / "pool.txt").read_text().split()
            assert len(pool) == 4

            new = {"email": "new@mail.uni-a.edu", "given_name": "New", "family_name": "Comer",
                   "affiliation": "University of C"}
            # pc1 wrote 102, under an address that names no organisation: only their name makes the conflict.
            given, family = names[1].rsplit(" ", 1)
            co_author = {"email": "pc1.home@gmail.com", "given_name": given, "family_name": family}
            papers = [{"pid": 101, "title": records[0]["title"], "abstract": records[0].get("abstract"),
                       "authors": [new], "pc_conflicts": {"pc3@uni-d.org": "collaborator"}},
                      {"pid": 102, "title": records[1]["title"], "abstract": records[1].get("abstract"),
                       "authors": [{"email": "x@elsewhere.org", "given_name": "Xi", "family_name": "Yu"}, co_author],
                       "pc_conflicts": {"pc1@uni-b.edu": "author"}},
                      {"pid": 103, "title": "Withdrawn", "withdrawn": True, "status": "withdrawn", "authors": []}]
            papers.insert(2, papers[1])  # two exports joined: 102 twice (a differing repeat: the unit tests)
            (tmp_path / "papers.json").write_text(json.dumps(papers))
            done = cli(env, "ingest", "hotcrp-papers", str(tmp_path / "papers.json"),
                       "--submissions-out", str(tmp_path / "subs.jsonl"), "--conflicts-out", str(tmp_path / "c.csv"))
            assert "2 read, 1 withdrawn (skipped)" in done.stdout and "1 declared conflicts" in done.stdout
            assert "1 repeated paper (by pid) kept once" in done.stderr
            assert "1 author conflict not written" in done.stdout
            assert "@" not in done.stdout

            out = cli(env, "reviewers", "assign", "--queries", str(tmp_path / "subs.jsonl"),
                      "--pool", str(tmp_path / "pool.txt"), "--conflicts", str(tmp_path / "c.csv"),
                      "--per-paper", "1", "--max-load", "2", "--format", "hotcrp")
            rows = list(csv.DictReader(io.StringIO(out.stdout)))
            assigned = {(r["paper"], r["email"]) for r in rows}
            assert {p for p, _ in assigned} == {"101", "102"}
            # 101: pc0 (email domain uni-a.edu), pc2 (institution University of C), pc3 (declared) ruled out.
            assert assigned & {("101", "pc0@cs.uni-a.edu"), ("101", "pc2@gmail.com"), ("101", "pc3@uni-d.org")} \
                == set()
            assert ("101", "pc1@uni-b.edu") in assigned and ("102", "pc1@uni-b.edu") not in assigned  # their own
            assert "email domain" in out.stderr and "institution" in out.stderr and "declared (hotcrp" in out.stderr
            assert "@" not in out.stderr

            # The conflicts file as Excel saves it (a byte-order mark, CRLF, the header in capitals, a row twice)
            # assigns as the clean file does; one that applies to nothing is refused (--allow-empty: the unit tests).
            def assign(conflicts: list[str], *more: str, check: bool = True):
                return cli(env, "reviewers", "assign", "--queries", str(tmp_path / "subs.jsonl"),
                           "--pool", str(tmp_path / "pool.txt"), *conflicts, "--per-paper", "1", "--max-load", "2",
                           "--format", "hotcrp", *more, check=check)

            lines = (tmp_path / "c.csv").read_text(encoding="utf-8").splitlines()
            excel = tmp_path / "c-excel.csv"
            excel.write_bytes(("\ufeff" + "\r\n".join([lines[0].upper(), *lines[1:], lines[1]]) + "\r\n").encode())
            saved = assign(["--conflicts", str(excel)])
            assert saved.stdout == out.stdout and "1 repeated" in saved.stderr
            nothing = tmp_path / "nothing.csv"
            nothing.write_text(f"{lines[0]}\n999,conflict,pc0@cs.uni-a.edu,collaborator\n", encoding="utf-8")
            refused = assign(["--conflicts", str(nothing)], check=False)
            assert refused.returncode == 2 and refused.stdout == "" and refused.stderr.splitlines()[-1] == (
                f"scholargraph: --conflicts {nothing}: none of its 1 row(s) applies to this run: it changes "
                f"nothing; check its ids, or give --allow-empty to go on")
        finally:
            store.reset()

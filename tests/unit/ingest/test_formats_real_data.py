"""Parse + normalize the real data in ../shared/data: ACM-CR BibTeX, NIPS (AMiner), S2ORC sample."""

from __future__ import annotations

import collections
import time

import pytest

from scholargraph.errors import InvalidRecord
from scholargraph.ingest.normalize import Dropped, iter_raw, normalize
from scholargraph.ingest.sources import expand_inputs


def run(fmt: str, paths: list[str], keep=lambda bundle: bundle):
    """Every record's outcome: keep(bundle) for each paper, drop and quarantine reasons, and the rate."""
    bundles, drops, invalid = [], collections.Counter(), collections.Counter()
    started = time.perf_counter()
    for path in paths:
        for raw in iter_raw(fmt, path):
            try:
                bundles.append(keep(normalize(fmt, raw)))
            except Dropped as exc:
                drops[exc.reason] += 1
            except InvalidRecord as exc:
                invalid[exc.reason.split(":")[0]] += 1
    elapsed = time.perf_counter() - started
    total = len(bundles) + sum(drops.values()) + sum(invalid.values())
    print(f"\n{fmt}: {total} records in {elapsed:.1f}s ({total / elapsed:,.0f}/s); "
          f"{len(bundles)} papers, dropped {dict(drops)}, quarantined {dict(invalid)}")
    return bundles, drops, invalid


@pytest.mark.slow(reason="parses all 113k ACM-CR records; test_acm_cr_venue_sample keeps real ACM BibTeX in "
                         "make test")
def test_acm_cr_whole_bibtex_collection(shared_path):
    paths = expand_inputs([str(shared_path("acm-cr/acm-dl"))], suffixes=(".bib",))
    assert len(paths) > 800
    names: set[str] = set()
    leftovers: list[str] = []
    hinton = []

    def keep(bundle):
        # Only a summary per paper: holding 110k bundles would mostly measure the garbage collector.
        names.update(a.name for a in bundle.authors)
        text = bundle.paper.title + (bundle.paper.abstract or "") + "".join(a.name for a in bundle.authors)
        if any(ch in text for ch in "\\{}$"):
            leftovers.append(bundle.paper.id)
        if bundle.paper.id == "10.1145/3397271.3402425":
            hinton.append(bundle)
        return bundle.paper.id, bundle.paper.abstract is not None

    papers, drops, invalid = run("bibtex", paths, keep)
    total = len(papers) + sum(drops.values()) + sum(invalid.values())
    assert total > 110_000
    assert len(papers) > 100_000
    assert 3_000 < drops["session header"] < 5_000
    # Quarantine stays small: front matter without authors ("Cover Art", "Editorial Board") and
    # whatever the parser cannot read.
    assert sum(invalid.values()) < 0.01 * total
    assert set(invalid) <= {"no authors", "missing title", "invalid year", "unbalanced braces",
                            "malformed BibTeX"}
    assert len({paper_id for paper_id, _ in papers}) > 0.99 * len(papers)  # DOIs identify nearly every record
    assert sum(has_abstract for _, has_abstract in papers) > 0.8 * len(papers)
    assert leftovers == []  # no LaTeX commands, braces or math dollars left in titles, abstracts, names
    assert {"Sören Auer", "Børge Jakobsen", "K. Selçuk Candan", "Roberto García"} <= names
    (bundle,) = hinton
    assert bundle.paper.title == "The Next Generation of Neural Networks"
    assert bundle.paper.year == 2020 and bundle.venue.id == "venue:sigir"
    assert [a.name for a in bundle.authors] == ["Geoffrey Hinton"]


# A sample of the library in `make test`: venues and years that hold the names with LaTeX accents the whole-
# collection test checks, session headers, and the Hinton record (1.7 MB of the 167 MB).
VENUE_SAMPLE = ("sigir/sigir-2016.bib", "sigir/sigir-2020.bib", "jcdl/jcdl-2020.bib", "wims/wims-2011.bib",
                "asonam/asonam-2014.bib")


def test_acm_cr_venue_sample(shared_path):
    paths = [str(shared_path(f"acm-cr/acm-dl/{name}")) for name in VENUE_SAMPLE]
    names: set[str] = set()
    leftovers: list[str] = []

    def keep(bundle):
        names.update(a.name for a in bundle.authors)
        text = bundle.paper.title + (bundle.paper.abstract or "") + "".join(a.name for a in bundle.authors)
        if any(ch in text for ch in "\\{}$"):
            leftovers.append(bundle.paper.id)
        return bundle

    papers, drops, invalid = run("bibtex", paths, keep)
    total = len(papers) + sum(drops.values()) + sum(invalid.values())
    assert total > 1_000 and drops["session header"] >= 27  # sigir-2016 has 27 "Session details" records
    assert sum(invalid.values()) < 0.01 * total
    assert len({b.paper.id for b in papers}) > 0.99 * len(papers)
    assert leftovers == []
    assert {"Sören Auer", "Børge Jakobsen", "K. Selçuk Candan"} <= names
    (hinton,) = [b for b in papers if b.paper.id == "10.1145/3397271.3402425"]
    assert hinton.paper.title == "The Next Generation of Neural Networks" and hinton.venue.id == "venue:sigir"
    assert [a.name for a in hinton.authors] == ["Geoffrey Hinton"]


def test_nips_aminer(shared_path):
    bundles, drops, invalid = run("aminer", [str(shared_path("nips/nips-1987-1993.aminer.jsonl"))])
    assert len(bundles) == 844 and not drops and not invalid
    ids = {b.paper.id for b in bundles}
    assert all(i.startswith("aminer:nips-") for i in ids)
    assert all(b.authors and all(a.id.startswith("aminer:nips-a") for a in b.authors) for b in bundles)
    assert {b.paper.year for b in bundles} == set(range(1987, 1994))
    assert {b.venue.id for b in bundles} == {"venue:nips"}
    citations = [c for b in bundles for c in b.citations]
    # 498 listed references, less 3 self-references and 2 repeats; all point inside the corpus.
    assert len(citations) == 493 and all(c.cited_id in ids for c in citations)
    assert len({a.id for b in bundles for a in b.authors}) > 700


def test_s2orc_metadata_sample(shared_path):
    bundles, drops, invalid = run("s2", [str(shared_path("fixtures/s2orc-metadata-sample.jsonl"))])
    assert len(bundles) == 996 and not drops and invalid == {"no authors": 4}
    with_doi = [b for b in bundles if b.paper.doi]
    assert len(with_doi) > 500 and all(b.paper.id == b.paper.doi == b.paper.doi.lower() for b in with_doi)
    assert all(b.paper.sources[0].startswith("s2corpus:") for b in bundles)
    assert all(not b.paper.id.startswith("s2corpus:") or b.paper.id == b.paper.sources[0] for b in bundles)
    assert sum(len(b.citations) for b in bundles) > 3000

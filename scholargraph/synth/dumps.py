"""Corpus records as AMiner or OpenAlex JSON lines, and the citation counts patched into them at the end."""

from __future__ import annotations

import json
import mmap
from pathlib import Path

import numpy as np

from scholargraph.synth.ids import ID_SHAPES, id_template

NC_WIDTH = 10  # citation-count placeholder: JSON allows the spaces that pad it
PATCH_BLOCK = 16384  # records per mapped window when citation counts are patched in


class RecordWriter:
    """One corpus record as a JSON line built by string formatting (every name is JSON-safe: lexicon.SAFE).

    The line ends with the citation-count key: the count is known only at the end, so the caller writes a
    space-padded placeholder of NC_WIDTH bytes after it, which `patch_counts` fills in.
    """

    def __init__(self, fmt: str, venue_names: list[str], orgs: list[str]):
        self.venue_names = venue_names
        self.orgs = orgs
        # Bound str.format of each id template: the hot loop formats millions of ids.
        self._tpl = {k: id_template(k, fmt, record=True).format for k in ID_SHAPES}
        self.line = self._aminer_line if fmt == "aminer" else self._openalex_line
        self.nc_key = '], "n_citation": ' if fmt == "aminer" else '], "cited_by_count": '

    def ref_strings(self, refs: list[int]) -> str:
        pf, xf = self._tpl["paper"], self._tpl["stub"]
        return ", ".join(['"' + (pf(r + 1) if r >= 0 else xf(-r)) + '"' for r in refs])

    def _aminer_line(self, pid, title, abstract, y, venue, authors, names, org_ids) -> str:
        af, orgs = self._tpl["author"], self.orgs
        auth = ", ".join([f'{{"name": "{nm}", "id": "{af(a + 1)}", "org": "{orgs[o]}"}}'
                          for a, nm, o in zip(authors, names, org_ids, strict=True)])
        return (f'{{"id": "{self._tpl["paper"](pid + 1)}", "title": "{title}", "abstract": "{abstract}", '
                f'"year": {y}, "venue": {{"raw": "{self.venue_names[venue]}", '
                f'"id": "{self._tpl["venue"](venue + 1)}"}}, "authors": [{auth}], "references": [')

    def _openalex_line(self, pid, title, abstract, y, venue, authors, names, org_ids) -> str:
        af, of, orgs = self._tpl["author"], self._tpl["org"], self.orgs
        k = len(authors)
        parts = []
        for j, (a, nm, o) in enumerate(zip(authors, names, org_ids, strict=True)):
            position = "first" if j == 0 else ("last" if j == k - 1 else "middle")
            parts.append(f'{{"author_position": "{position}", "author": {{"id": "{af(a + 1)}", '
                         f'"display_name": "{nm}"}}, "institutions": [{{"id": "{of(o + 1)}", '
                         f'"display_name": "{orgs[o]}"}}]}}')
        inv: dict[str, list[int]] = {}
        for j, w in enumerate(abstract.split(" ")):
            inv.setdefault(w, []).append(j)
        vname = self.venue_names[venue]
        kind = "conference" if vname.startswith(("International", "Workshop")) else "journal"
        return (f'{{"id": "{self._tpl["paper"](pid + 1)}", "doi": null, "title": "{title}", '
                f'"display_name": "{title}", "publication_year": {y}, "type": "article", '
                f'"authorships": [{", ".join(parts)}], "primary_location": {{"source": {{"id": '
                f'"{self._tpl["venue"](venue + 1)}", "display_name": "{vname}", "type": "{kind}"}}}}, '
                f'"abstract_inverted_index": {json.dumps(inv)}, "referenced_works": [')


def patch_counts(path: Path, offsets: np.ndarray, counts: np.ndarray) -> None:
    """Write each paper's final in-corpus citation count into its padded placeholder at `offsets`.

    The file is mapped one window of records at a time, so that only that window's pages are resident.
    """
    w = NC_WIDTH
    cols = np.arange(w)
    n = len(offsets)
    with open(path, "r+b") as fh:
        for b0 in range(0, n, PATCH_BLOCK):
            b1 = min(n, b0 + PATCH_BLOCK)
            offs = offsets[b0:b1]
            start = int(offs[0]) // mmap.ALLOCATIONGRANULARITY * mmap.ALLOCATIONGRANULARITY
            stop = int(offs[-1]) + w
            mm = np.memmap(fh, dtype=np.uint8, mode="r+", offset=start, shape=(stop - start,))
            mm[(offs - start)[:, None] + cols] = _ascii_counts(counts[b0:b1], w)
            mm.flush()
            del mm


def _ascii_counts(counts: np.ndarray, width: int) -> np.ndarray:
    """Counts as left-aligned, space-padded ASCII digits: one row of `width` bytes per count."""
    c = counts.astype(np.int64)
    ndig = np.ones(len(c), dtype=np.int64)
    for k in range(1, width):
        ndig += c >= 10 ** k
    out = np.full((len(c), width), ord(" "), dtype=np.uint8)
    for j in range(width):
        live = j < ndig
        digit = (c // 10 ** np.maximum(ndig - 1 - j, 0)) % 10
        out[live, j] = (ord("0") + digit[live]).astype(np.uint8)
    return out

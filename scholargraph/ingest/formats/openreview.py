"""OpenReview expertise dataset parser (archives/<profile id>.jsonl publications) -> RawRecord."""

from __future__ import annotations

import os
from collections.abc import Iterator

from scholargraph.graph.records import RawRecord
from scholargraph.ingest.sources import iter_json_records

# The layout openreview/openreview-expertise reads (its README, "Datasets"; expertise/create_dataset.py
# writes it):
#
#   DIR/archives/~Ann_Lee1.jsonl   one file per reviewer (named by profile id), one publication per line:
#                                  {"id", "content": {"title", "abstract", "authors", "authorids", ...},
#                                  "cdate"/"pdate"/"tcdate" (ms since the epoch), ...}; API 2 wraps each
#                                  content field as {"value": ...}
#   DIR/submissions.json           {id: submission} (create_dataset), or submissions.jsonl (one per line),
#                                  or submissions/<id>.jsonl (one line each)
#   DIR/bids/, DIR/profiles.json*  other files of the dataset
#
# Only the archives are papers of the graph; this parser yields nothing for the other files, which
# ingest/openreview.py reads (submissions into a --queries file, profiles' emails and institutions onto
# the authors). The reviewer an archive belongs to travels in the record as OWNER (a record crosses to the
# parse workers as its data dict only).

ARCHIVES = "archives"
OWNER = "_archiveOwner"
_SUFFIXES = (".jsonl.gz", ".jsonl", ".json.gz", ".json")


def archive_owner(path: str) -> str | None:
    """The profile id an archive file belongs to (its name without the suffix), or None when `path` is not
    a file of an `archives` folder."""
    parent, name = os.path.split(path)
    if os.path.basename(parent) != ARCHIVES:
        return None
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)] or None
    return None


def iter_raw(path: str) -> Iterator[RawRecord]:
    """One RawRecord per publication of an archive file, its owner in the data; nothing for other files."""
    owner = archive_owner(path)
    if owner is None:
        return
    for record in iter_json_records(path):
        if record.data is not None:
            record.data[OWNER] = owner
        yield record

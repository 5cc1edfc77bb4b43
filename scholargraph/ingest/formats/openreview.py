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
#                                  "pdate"/"odate"/"cdate"/"tcdate" (ms since the epoch), ...}; API 2 wraps
#                                  each content field as {"value": ...} and adds odate
#   DIR/submissions.json           {id: submission} (create_dataset), or submissions.jsonl (one per line),
#                                  or submissions/<id>.jsonl (one line each)
#   DIR/archives/match_submissions.jsonl
#                                  no reviewer's archive: the submissions create_dataset fetches for paper-paper
#                                  matching (its `match_paper_*` settings), one {"id", "content"} per line
#   DIR/bids/, DIR/profiles.json*  other files of the dataset
#
# Only the archives are papers of the graph; this parser yields nothing for the other files, which
# ingest/openreview.py reads (submissions into a --queries file, profiles' emails and institutions onto
# the authors). The reviewer an archive belongs to travels in the record as OWNER (a record crosses to the
# parse workers as its data dict only).

ARCHIVES = "archives"
OWNER = "_archiveOwner"
MATCH_SUBMISSIONS = "match_submissions"  # create_dataset.py's file of submissions in archives/, no profile id
_SUFFIXES = (".jsonl.gz", ".jsonl", ".json.gz", ".json")
# The publication date first, then API 2's online date, then the creation dates: create_dataset.py's
# _get_paper_date order (pdate, odate, cdate) with API 1's true creation date last.
DATE_FIELDS = ("pdate", "odate", "cdate", "tcdate")
# OpenReview's dates are milliseconds since the epoch. A value below 10^10 is seconds: as milliseconds it would
# be a day of January to April 1970, as seconds it is any date up to the year 2286.
SECONDS_BELOW = 10**10


def note_date_ms(data: dict) -> tuple[str, float, bool] | None:
    """(field, milliseconds since the epoch, whether the file gave seconds) of a note's first positive date
    field (DATE_FIELDS), or None when it has none."""
    for name in DATE_FIELDS:
        value = data.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            in_seconds = value < SECONDS_BELOW
            return name, value * 1000 if in_seconds else value, in_seconds
    return None


def archive_owner(path: str) -> str | None:
    """The profile id an archive file belongs to (its name without the suffix), or None when `path` is not
    a reviewer's archive: not in an `archives` folder, or the submissions of match_submissions.jsonl."""
    stem = _archives_stem(path)
    return stem if stem != MATCH_SUBMISSIONS else None


def is_match_submissions(path: str) -> bool:
    """Whether `path` is create_dataset.py's archives/match_submissions.jsonl (submissions, no archive)."""
    return _archives_stem(path) == MATCH_SUBMISSIONS


def _archives_stem(path: str) -> str | None:
    """The name of a JSON file of an `archives` folder without its suffix; None for any other file."""
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

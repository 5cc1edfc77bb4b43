"""openreview-py's own upload of a score file, over a stand-in for OpenReview's HTTP API: what the unit and the
integration tests run `--format openreview` files through.

`Matching._build_scores_from_file` of openreview/venue/matching.py (openreview-py 2.9.1, the test dependency; the
same code at openreview/openreview-py e25fd7da055e7ae3435df51dbdadf2760c59d281, lines 490-496 and 545-575) is the
narrowest entry point of a venue's matching setup that reads a score file: `Matching.setup(compute_affinity_scores=
FILE)` calls it (line 1044) after fetching the committee's profiles and submissions from the API. Only the HTTP API
is stubbed: the venue, the matching and the edges are openreview-py's own objects."""

from __future__ import annotations

from pathlib import Path

import openreview
from openreview.api import Group, Invitation, Note
from openreview.venue import Venue
from openreview.venue.matching import Matching

VENUE_ID = "ICLR.cc/2027/Conference"
SUPPORT = "openreview.net/Support"


class OpenReviewAPI:
    """A stand-in for OpenReview's HTTP API (api2.openreview.net), answering from memory the calls the score
    upload makes: the Affinity_Score invitation, deleting the old edges, posting and counting the new ones."""

    baseurl = "https://api2.openreview.net"
    token = "not-a-jwt"  # openreview.Client (API 1, built by the venue's GroupBuilder) decodes no profile from it

    def __init__(self):
        self.posted: list[openreview.api.Edge] = []
        self.deleted: list[str] = []

    def get_invitation(self, id):
        return Invitation(id=id, edit={"readers": [VENUE_ID, "${2/tail}"]})

    def delete_edges(self, invitation, *args, **kwargs):
        self.deleted.append(invitation)

    def post_edges(self, edges):
        self.posted += edges
        return edges

    def get_edges_count(self, invitation=None, **kwargs):
        return sum(1 for e in self.posted if e.invitation == invitation)


def upload_scores(score_file: Path, submission_ids: list[str]) -> OpenReviewAPI:
    """openreview-py's upload of a score file for the venue's reviewers, as Matching.setup does it for a file.
    A row whose paper is none of `submission_ids` is dropped by openreview-py (printed as a deleted paper)."""
    api = OpenReviewAPI()
    venue = Venue(api, VENUE_ID, SUPPORT)
    # A venue of OpenReview's templated workflow takes its Affinity_Score invitation from the API (matching.py
    # line 90) instead of building one: the one invitation call the stub answers.
    venue.request_form_invitation = f"{SUPPORT}/Venue_Request/-/Conference_Review_Workflow"
    reviewers = Group(id=venue.get_reviewers_id())
    matching = Matching(venue, reviewers)
    submissions = [Note(id=note_id, number=n) for n, note_id in enumerate(submission_ids, start=1)]
    matching._build_scores_from_file(venue.get_affinity_score_id(reviewers.id), str(score_file), submissions)
    return api

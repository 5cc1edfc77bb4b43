"""The reviewer model's use cases below the CLI: train, recommend (and write back), evaluate; where the
trained model lives (a ModelRegistry), how its evidence index is built from the graph, and the id files the
commands share. No click here: the CLI parses options and prints, the scoring jobs call the same functions."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from scholargraph.conference import profiles
from scholargraph.conference.conflicts import AuthorDetails, ConflictChecker
from scholargraph.conference.declared import DeclaredChecker, DeclaredFile, match_declared, require_applied
from scholargraph.conference.exchange import EmailBook
from scholargraph.conference.submissions import (
    Query,
    ReviewerPool,
    evidence_as_of,
    no_evidence_warning,
    read_candidates,
    read_ids,
    submission_authors,
)
from scholargraph.errors import NotFitted, UsageError
from scholargraph.graph.features import current_model_paths, features_up_to_date
from scholargraph.graph.ids import IdResolver, Resolution, output_id
from scholargraph.graph.scoring import publish_paper_scores
from scholargraph.graph.snapshot import NO_YEAR, GraphSnapshot
from scholargraph.graph.snapshot_cache import StateCache, cache_root, graph_watermark
from scholargraph.graph.vectors import stored_text_vectors
from scholargraph.ranking.batch import IN_PROCESS, PartitionMapper
from scholargraph.ranking.graph_models import load_graph_models
from scholargraph.ranking.metrics import read_qrels
from scholargraph.ranking.reviewers.batch import recommend_queries
from scholargraph.ranking.reviewers.evidence import EvidenceIndex
from scholargraph.ranking.reviewers.explain import Suggestion
from scholargraph.ranking.reviewers.reco_rank import RecoRank
from scholargraph.registry import ModelRegistry
from scholargraph.user_files import (
    Warn,
    examples,
    no_warning,
    read_jsonl,
    require_effect,
)

if TYPE_CHECKING:  # imported when evaluating (it is large)
    from scholargraph.ranking.reviewers.expertise import ExpertiseJudgments

MODEL_KIND = "reviewers"


def _ignore(message: str) -> None:
    """The default `warn`: callers whose ids come from the graph have nothing to be warned about."""


def registry(models_dir: Path) -> ModelRegistry:
    """The reviewer models under models_dir/reviewers/<version>/, current.json naming the one in use."""
    return ModelRegistry(models_dir, MODEL_KIND, train_hint="scholargraph reviewers train", label="reviewer")


def resolve_ids(resolver: IdResolver, kind: str, given, what: str, warn: Callable[[str], None]) -> Resolution:
    """`given` ids of one option resolved: unknown ones are reported through `warn` (their count, up to five
    examples); none known at all is a UsageError (exit 2) that shows the expected form."""
    res = resolver.resolve(kind, given).require(what)
    message = res.warning(what)
    if message:
        warn(message)
    return res


def resolve_candidates(resolver: IdResolver, listed: dict[str, list[str]], what: str,
                       warn: Callable[[str], None]) -> tuple[dict[str, list[str]], Resolution]:
    """Candidate lists with every id resolved to its author node id (the qualified id, or the source's bare
    id when exactly one author has it); unknown ones are left out with a warning, and none known at all is
    a UsageError (exit 2): never a silent default score for an id the graph does not have."""
    res = resolve_ids(resolver, "author", [c for cands in listed.values() for c in cands], what, warn)
    return {qid: list(dict.fromkeys(res.ids[c] for c in cands if c.strip() in res.ids))
            for qid, cands in listed.items()}, res


EVIDENCE_CACHE = "evidence"  # models_dir/cache/evidence/<digest of the graph state and models>/
KEEP_CACHED = 2  # evidence indexes kept (the newest): the current graph state, and the one before it
# models_dir/cache/submission-vectors/<digest of the encoder and the texts>/: the text vectors of the last sets of
# submissions (EvidenceIndex.remember_encodings), about 1.5 kB a submission with MiniLM.
SUBMISSION_VECTORS_CACHE = "submission-vectors"
KEEP_SUBMISSION_SETS = 8


def build_index(store, models_dir: Path, quiet: bool, models: dict[str, str] | None = None,
                read_snapshot: Callable[[str | None], GraphSnapshot] | None = None,
                cache: bool = True) -> EvidenceIndex:
    """Evidence over the graph as it is now, with the encoder and topic model saved in `models`
    ({"topics": dir, "encoder": dir}; by default the graph's current ones, when saved). `read_snapshot(key)`
    gives the graph with its stored vectors (text vectors of encoder `key`) when the caller shares one
    snapshot between steps (a scoring-jobs run).

    Nothing of it depends on a query, so it is built once per graph state and models and kept under
    `models_dir/cache/evidence/` (`cache=False` skips it): an interactive call on an unchanged graph loads it
    instead of pulling the graph again. The key is the graph's watermark (graph.snapshot_cache), the models'
    directories and the encoder's key (docs/reviewers.md)."""
    graph_models = current_model_paths(models_dir)
    paths = dict(graph_models if models is None else models)
    _, encoder = load_graph_models(paths={k: v for k, v in paths.items() if k == "encoder"})
    key = encoder.key if encoder is not None and getattr(encoder, "fitted_", False) else None

    def load_topic_model(where: dict[str, str] | None = None):
        # Only submissions given as text need it (and gensim, a second of import): a cached index of an
        # unchanged graph loads it on first use, not for in-graph papers.
        return load_graph_models(paths={k: v for k, v in (where or paths).items() if k == "topics"})[0]

    def build() -> EvidenceIndex:
        topic_model = load_topic_model()
        # What `features` stored is read, not recomputed, when its last run saw the graph as it is now: the
        # citation vectors, and the topic mixtures when they come from this topic model.
        current = features_up_to_date(store, models_dir, ("topics", "vectors"))
        if read_snapshot is not None:
            snapshot = read_snapshot(key)
        else:
            snapshot = GraphSnapshot.from_store(store, with_text=True, quiet=quiet, semantic_encoder=key,
                                                with_vectors=key is not None or current)
        snapshot.require_papers("reviewers")
        # Only papers without a text vector of this encoder (ingested since) are encoded here.
        text = stored_text_vectors(snapshot, encoder)[0] if key is not None and encoder is not None else None
        same_topics = topic_model is not None and (models or graph_models).get("topics") == graph_models.get("topics")
        return EvidenceIndex.build(snapshot, encoder=encoder, topic_model=topic_model, text_vectors=text,
                                   stored_topic_vectors=snapshot.topic_vectors if current and same_topics else None,
                                   stored_citation_vectors=snapshot.citation_vectors if current else None)

    if not cache or read_snapshot is not None or store is None:
        return build()

    def save(index: EvidenceIndex, path: Path) -> None:
        index.save(path)
        # Models the index fitted itself (the graph has none saved) go in the entry: submissions given as
        # text need the very models its vectors came from.
        if "topics" not in paths and index.topic_model is not None:
            index.topic_model.save(path / "topics")
        if encoder is None and index.encoder is not None:
            index.encoder.save(path / "encoder")

    def load(path: Path) -> EvidenceIndex:
        own = {kind: str(path / kind) for kind in ("topics", "encoder") if (path / kind).is_dir()}
        own_encoder = load_graph_models(paths={"encoder": own["encoder"]})[1] if "encoder" in own else None
        return EvidenceIndex.load(path, encoder=encoder if encoder is not None else own_encoder,
                                  load_topic_model=lambda: load_topic_model({**own, **paths}))

    state = {"graph": graph_watermark(store), "models": dict(sorted((models or graph_models).items())),
             "encoder": key}
    index = StateCache(cache_root(models_dir) / EVIDENCE_CACHE, keep=KEEP_CACHED).get(state, build, save, load)
    index.remember_encodings(StateCache(cache_root(models_dir) / SUBMISSION_VECTORS_CACHE, keep=KEEP_SUBMISSION_SETS))
    return index


def index_for_model(store, models_dir: Path, meta: dict, quiet: bool,
                    read_snapshot: Callable[[str | None], GraphSnapshot] | None = None) -> EvidenceIndex:
    """Evidence read with the encoder and topic model the reviewer model was trained with (a later
    `citations train` or `features --retrain` changes the graph's current ones, not this model's inputs)."""
    return build_index(store, models_dir, quiet, models=meta.get("evidence_models"), read_snapshot=read_snapshot)


def load_model(models_dir: Path) -> tuple[RecoRank, dict]:
    """The model in use and its current.json record (NotFitted, saying how to train one, before the first)."""
    meta = registry(models_dir).require_current()
    return RecoRank.load(meta["path"]), meta


@dataclass
class ReviewerFiles:
    """The user's files of a reviewers command, read before the store is opened: a bad one is refused (exit 2,
    one line naming the option, the file and the line) before a server, a model or the graph is touched.
    Ids are as the files give them (resolve them against the graph)."""

    records: list[dict] = field(default_factory=list)  # --queries: submission records (user_files.read_jsonl)
    grades: dict[str, dict[str, int]] = field(default_factory=dict)  # --qrels: graded judgments
    ratings: dict[str, dict[str, float]] = field(default_factory=dict)  # --qrels of the expertise protocol
    pool: list[str] | None = None  # --pool
    candidates: dict[str, list[str]] | None = None  # --candidates (evaluate: else the qrels' judged reviewers)
    candidates_file: str | None = None  # where they come from, for the message when none applies

    @classmethod
    def for_recommend(cls, queries: str | None = None, pool: str | None = None,
                      candidates: str | None = None, warn: Warn = no_warning) -> ReviewerFiles:
        """`warn`, in each of these: what the files repeat, kept once."""
        return cls(records=read_jsonl(queries, "--queries", warn=warn) if queries else [],
                   pool=read_ids(pool, "--pool", warn) if pool else None,
                   candidates=read_candidates(candidates, "--candidates", warn) if candidates else None,
                   candidates_file=candidates)

    @classmethod
    def for_training(cls, queries: str, qrels: str, warn: Warn = no_warning) -> ReviewerFiles:
        """Submissions and their graded judgments (`train --queries --qrels`)."""
        return cls(records=read_jsonl(queries, "--queries", warn=warn), grades=read_qrels(qrels, warn=warn))

    @classmethod
    def for_candidates(cls, queries: str, qrels: str, candidates: str | None = None,
                       warn: Warn = no_warning) -> ReviewerFiles:
        """The candidates protocol's files: the candidates listed, else the reviewers the qrels judge (whose
        repeats read_qrels has reported already)."""
        judged = cls.for_training(queries, qrels, warn)
        judged.candidates = read_candidates(candidates, "--candidates", warn) if candidates \
            else read_candidates(qrels, "--qrels")
        return judged

    @classmethod
    def for_expertise(cls, queries: str, qrels: str, warn: Warn = no_warning) -> ReviewerFiles:
        """The expertise protocol's files: `paper 0 reviewer expertise` ratings and the rated papers."""
        from scholargraph.ranking.reviewers.expertise import read_expertise_qrels

        ratings = read_expertise_qrels(qrels, warn=warn)
        return cls(records=read_jsonl(queries, "--queries", warn=warn), ratings=ratings)


@dataclass
class Trained:
    """What `train` made: the model, the size of its reviewer pool, and where it was saved."""

    model: RecoRank
    pool_size: int
    path: Path


def train(store, models_dir: Path, *, min_papers: int = 3, judged_files: tuple[str, str] | None = None,
          training_queries: int = 600, steps: int = 300, quiet: bool = True,
          files: ReviewerFiles | None = None) -> Trained:
    """Train on the graph (hidden papers, their authors as positives), plus the judgments of `judged_files`
    (a submissions JSONL and its qrels) when given, or of `files` when the caller read them already; save
    the model as a new version and make it current."""
    # The user's files are read first: a bad one is refused before the graph is pulled.
    if files is None:
        files = ReviewerFiles.for_training(*judged_files) if judged_files else ReviewerFiles()
    records, grades = files.records, files.grades
    evidence_models = current_model_paths(models_dir)
    index = build_index(store, models_dir, quiet, models=evidence_models)
    pool = ReviewerPool.from_snapshot(index.snapshot, min_papers=min_papers)
    judged = [(q, grades[q.id]) for q in index.queries_from_records(records) if grades.get(q.id)] if records else []
    model = RecoRank(min_papers=min_papers, self_supervised=training_queries, steps=steps).fit(index, pool,
                                                                                             judged=judged)
    models = registry(models_dir)
    version, path = models.claim()
    model.save(path)
    models.publish({"path": str(path), "version": version, "min_papers": min_papers,
                    "evidence_models": evidence_models})
    return Trained(model, len(pool), path)


def read_author_details(store) -> AuthorDetails:
    """The authors' institutions and email domains, for the conflicts beyond co-authorship."""
    return AuthorDetails.from_nodes(*store.read_nodes("Author", AuthorDetails.PROPS))


def recommend(store, models_dir: Path, *, paper_ids=(), queries_file: str | None = None, pool_file: str | None = None,
              candidates_file: str | None = None, k: int = 10, coi: bool = True, write: bool = False,
              quiet: bool = True, index: EvidenceIndex | None = None, replace_all: bool = False,
              run_props: dict | None = None, id_forms: dict[str, dict[str, str]] | None = None,
              picture: str | None = None, warn: Callable[[str], None] = _ignore,
              mapper: PartitionMapper = IN_PROCESS, files: ReviewerFiles | None = None,
              evidence_until: int | str | None = None, declared: Sequence[DeclaredFile] = (),
              emails: EmailBook | None = None, institution_years: int | None = 3, allow_empty: bool = False):
    """Suggestions per query; with `write`, a scoring run that stores them for the in-graph papers and
    keeps the current suggestions of every other paper (`replace_all`: only this run's papers remain).

    Paper and author ids (`paper_ids`, the pool and candidate files) may be qualified or the source's bare
    ids: they are resolved to node ids (graph.ids.IdResolver); unknown ones are left out with a warning, and
    an option none of whose ids is known is a UsageError. `id_forms`, when given, is filled with
    {"paper": {node id: given id}, "author": {...}} for ids given in another form, so that outputs can
    answer in the caller's own ids. `picture`: a PNG path for the evidence graph of the first query's top
    suggestion (reviewers/picture.py). `warn` gets the line about ids left out.

    The queries against the pool go through `mapper` (reviewers/batch.py: the model, the evidence and the pool
    are its payload, so a Spark mapper scores them in partitions); those with a candidate list (the CoF
    protocol: a pool of their own each) are scored here, in process, whatever the mapper. `files`: the three
    files as the caller read them already (ReviewerFiles.for_recommend), in place of the paths.

    `evidence_until` (submissions.evidence_as_of): None, the default, judges reviewers on all their papers whatever
    year a submission carries; SUBMISSION_YEAR or a year cuts the evidence there. Pairs left without any
    eligible evidence are named through `warn` (count and examples) and are not written to the graph.

    `declared`: conflict files as read (declared.read_declared): their pairs are never suggested, besides the
    graph's conflicts (`coi`); a reviewer given by email is found through `emails`; pairs naming nothing known
    are reported through `warn`. A conflicts or candidates file none of whose entries applies to these
    submissions is a UsageError unless `allow_empty` (user_files.require_effect)."""
    # The user's files are read first: a bad one is refused before a model is loaded or the graph pulled.
    files = files or ReviewerFiles.for_recommend(queries_file, pool_file, candidates_file)
    records, pool_given, candidates_given = files.records, files.pool, files.candidates
    model, meta = load_model(models_dir)
    index = index or index_for_model(store, models_dir, meta, quiet)
    if coi and store is not None:
        # Institutions and emails live on the Author nodes, beyond the snapshot: the shared-institution and
        # email-domain conflicts (conference/conflicts.py, `institution_years` up to each submission's year) need them.
        index.use_author_details(read_author_details(store), institution_years)
    resolver = IdResolver.for_snapshot(index.snapshot, lookup=store.lookup_ids if store is not None else None)
    forms = id_forms if id_forms is not None else {}
    forms.setdefault("paper", {})
    forms.setdefault("author", {})
    queries = []
    if paper_ids:
        papers = resolve_ids(resolver, "paper", paper_ids, "--paper", warn)
        forms["paper"].update(papers.given_forms())
        queries = [index.query_for_paper(p) for p in papers.node_ids()]
    if records:
        queries += index.queries_from_records(records)
    queries = evidence_as_of(queries, evidence_until)
    if pool_given is not None:
        pool_ids = resolve_ids(resolver, "author", pool_given, "--pool", warn)
        forms["author"].update(pool_ids.given_forms())
        base_pool = ReviewerPool.from_snapshot(index.snapshot, author_ids=pool_ids.node_ids())
    else:
        base_pool = ReviewerPool.from_snapshot(index.snapshot, min_papers=meta.get("min_papers", 3))
    # The reviewers' own expertise settings (conference/profiles.py) shape each pool's papers; None without any.
    book = profiles.load_book(store, index.snapshot, evidence_until if isinstance(evidence_until, int) else None,
                              resolver)
    emptied: set[str] = set()
    candidates: dict[str, list[str]] = {}
    if candidates_given is not None:
        candidates, cand_ids = resolve_candidates(resolver, candidates_given, "--candidates", warn)
        forms["author"].update(cand_ids.given_forms())
    rule: ConflictChecker | bool = coi
    if declared:
        rule = _declared_rule(index, queries, forms, resolver, declared, emails, coi, warn, allow_empty)
    # A query is listed under its id, or under the form its paper id was given in (a bare id).
    lists = [candidates.get(q.id, candidates.get(forms["paper"].get(q.id, q.id))) for q in queries]
    if candidates_given is not None:
        _check_candidate_lists(candidates_given, queries, forms["paper"], files.candidates_file, allow_empty, warn)
    suggested: list[list[Suggestion] | None] = []
    for q, listed in zip(queries, lists):
        if listed is None:
            suggested.append(None)  # scored against the base pool, through `mapper`, below
        elif not listed:
            suggested.append([])
        else:
            # The CoF protocol: rank exactly the listed candidates; each known one gets a score, history
            # or not (unknown ids were left out with a warning above).
            pool = profiles.with_profiles(book, ReviewerPool.from_snapshot(index.snapshot, author_ids=listed),
                                          emptied)
            suggested.append(model.recommend(index, q, pool, k=len(pool), coi=rule, shortlist=None))
    batch = [q for q, s in zip(queries, suggested) if s is None]
    if batch:
        base_pool = profiles.with_profiles(book, base_pool, emptied)
    in_batch = iter(recommend_queries(model, index, batch, base_pool, k, rule, mapper) if batch else [])
    results: list[tuple[Query, list[Suggestion]]] = [(q, s if s is not None else next(in_batch))
                                                     for q, s in zip(queries, suggested)]
    if emptied:
        warn(profiles.emptied_warning(emptied))
    for _, sugg in results:
        profiles.settings_shown(book, sugg)
    unscored = no_evidence_warning(results, evidence_until, forms=forms)
    if unscored:
        warn(unscored)
    note = draw_top_evidence(index, results, picture) if picture else ""
    if write:
        rows = [{"source": s.reviewer_id, "target": q.id,
                 "props": {"score": s.score, "rank": s.rank, "main": s.main, "compensation": s.compensation,
                           "gate": s.gate, "reliability": s.reliability,
                           "evidence": json.dumps([asdict(p) for p in s.papers], default=str)}}
                for q, sugg in results if q.id in index.snapshot.paper_index for s in sugg if not s.no_history]
        scored = [q.id for q, _ in results if q.id in index.snapshot.paper_index]
        note = "\n".join(filter(None, [note, publish_paper_scores(
            store, "reviewers", rows, scored, meta["version"], queries=len(results), replace_all=replace_all,
            run_props=run_props)]))
    return results, note


def _check_candidate_lists(listed: Mapping[str, list[str]], queries: Sequence[Query], paper_forms: Mapping[str, str],
                           path: str | None, allow_empty: bool, warn: Callable[[str], None]) -> None:
    """Candidate lists under no submission of the run are not used: said (count and examples), and a file none
    of whose lists is used changes nothing (user_files.require_effect)."""
    ids = {q.id for q in queries} | {paper_forms.get(q.id, q.id) for q in queries}
    unused = [qid for qid in listed if qid not in ids]
    if len(unused) == len(listed):
        require_effect("--candidates", path or "", len(listed), "submission id", allow_empty, warn)
    elif unused:
        warn(f"warning: --candidates: {len(unused):,} of {len(listed):,} submission ids name no submission of "
             f"this run: their candidates are not used, {examples([output_id(u) for u in unused])}")


def _declared_rule(index: EvidenceIndex, queries: Sequence[Query], forms: dict[str, dict[str, str]],
                   resolver: IdResolver, declared: Sequence[DeclaredFile], emails: EmailBook | None, coi: bool,
                   warn: Callable[[str], None], allow_empty: bool = False) -> DeclaredChecker:
    """The graph's conflicts (when `coi`) plus the declared pairs matched to these submissions; what the
    files name that is not known, and their forced pairs (an assignment's business), are reported."""
    matched = match_declared(declared, queries, forms["paper"],
                             lambda kind, given: resolver.resolve(kind, given).ids, emails)
    what = declared[0].what
    for line in matched.warnings(what):
        warn(line)
    if matched.forced:
        warn(f"{what}: {len(matched.forced):,} forced pair(s) not used: recommend suggests, `reviewers assign "
             f"--force` assigns")
    reasons = ", ".join(f"{why} {n:,}" for why, n in sorted(matched.reasons().items())) or "none"
    warn(f"declared conflicts: {matched.count():,} (submission, reviewer) pair(s) are never suggested: {reasons}")
    require_applied(declared, matched.count(), allow_empty, warn)
    return DeclaredChecker(index.snapshot, enabled=coi, declared=matched.by_query,
                           details=index.author_details, institution_years=index.institution_years)


def draw_top_evidence(index: EvidenceIndex, results, path: str) -> str:
    """The evidence graph of the first suggestion with evidence, drawn to `path`; the note says which."""
    from scholargraph.graph.pictures import draw
    from scholargraph.ranking.reviewers.picture import evidence_graph

    for q, sugg in results:
        top = next((s for s in sugg if not s.no_history), None)
        if top is not None:
            draw(evidence_graph(index, q, top), path, caption=f"submission {q.id}; evidence papers are the "
                 "reviewer's own; edge width: semantic similarity or topic share")
            return f"picture: {path} (evidence of {top.reviewer_id} for {q.id})"
    return "picture: not drawn (no suggestion with evidence)"


def evaluate_candidates(store, models_dir: Path, queries: str, qrels: str, candidates: str | None = None, *,
                        seeds: int = 1, quiet: bool = True, warn: Callable[[str], None] = _ignore,
                        files: ReviewerFiles | None = None):
    """RECO-Rank (and its ablations, trained here) against CoF and the semantic baselines, ranking only the
    judged candidates (Soft/Hard P@5/P@10): an evaluate.Experiment. `files`: the three files as the caller
    read them already (ReviewerFiles.for_candidates)."""
    from scholargraph.ranking.reviewers import evaluate as ev

    # The user's files are read first: a bad one is refused before the graph is pulled.
    files = files or ReviewerFiles.for_candidates(queries, qrels, candidates)
    records, grades, listed = files.records, files.grades, files.candidates or {}
    index = build_index(store, models_dir, quiet)
    if candidates:
        judgments = ev.Judgments.from_records(index, records, grades, listed)
    else:  # reviewer ids as the qrels give them: resolve them (a bare source id is not a node id)
        cands, res = resolve_candidates(IdResolver.for_snapshot(index.snapshot), listed, "--qrels reviewers", warn)
        grades = {qid: {res.ids[a]: g for a, g in judged.items() if a in res.ids} for qid, judged in grades.items()}
        judgments = ev.Judgments(index.queries_from_records(records), grades, cands)
    pool = ReviewerPool.from_snapshot(index.snapshot, min_papers=3)
    training = ev.synthetic_training(index, pool)
    return ev.run_experiment(index, judgments, title="reviewer recommendation", training=training,
                             seeds=tuple(range(seeds)))


@dataclass
class ExpertiseEvaluation:
    """The expertise protocol's results per scorer, the judgments they were scored on, which RECO-Rank was
    used (`origin`), and the evidence's text encoder."""

    results: dict
    judgments: ExpertiseJudgments
    origin: str
    encoder: str


def evaluate_expertise(store, models_dir: Path, queries: str, qrels: str, *, bootstrap: int = 2000,
                       quiet: bool = True, warn: Callable[[str], None] = _ignore,
                       files: ReviewerFiles | None = None) -> ExpertiseEvaluation:
    """The trained reviewer model (trained here on the graph when there is none yet) and the baselines on
    reviewers' expertise ratings; reviewer ids as the qrels give them (bare source ids resolve). `files`:
    the two files as the caller read them already (ReviewerFiles.for_expertise)."""
    from scholargraph.ranking.reviewers import expertise as ex
    from scholargraph.ranking.reviewers.evaluate import record_texts

    # Before the model and the graph: a bad file costs no pull.
    files = files or ReviewerFiles.for_expertise(queries, qrels)
    ratings, records = files.ratings, files.records
    try:
        model, meta = load_model(models_dir)
        index = index_for_model(store, models_dir, meta, quiet)
        origin = f"the trained model {meta.get('version')}"
    except NotFitted:
        model, index = None, build_index(store, models_dir, quiet)
        origin = "no trained model yet: trained now on the graph (run `reviewers train` to keep one)"
    resolution = resolve_ids(IdResolver.for_snapshot(index.snapshot), "author", list(ratings), "--qrels reviewers",
                             warn)
    judgments = ex.ExpertiseJudgments.build(index, index.queries_from_records(records), ratings, resolution.ids,
                                            record_texts(records))
    if not judgments.ratings:
        raise UsageError("no reviewer of the qrels has two rated papers among the queries: nothing to evaluate")
    if model is None:
        model = RecoRank().fit(index)
    results = ex.expertise_experiment(index, judgments, model, bootstrap=bootstrap)
    return ExpertiseEvaluation(results, judgments, origin, getattr(index.encoder, "name", "?"))


def list_conflicts(store, *, paper_ids=(), records: Sequence[Mapping] = (), pool_ids: Sequence[str] | None = None,
                   coi_years: int | None = 5, institution_years: int | None = 3, quiet: bool = True,
                   warn: Callable[[str], None] = _ignore) -> list[tuple[str, str, str | None, str]]:
    """(submission, reviewer, name, why) of every conflict of interest the graph knows (conflicts.py), for in-graph
    papers (`paper_ids`) and submission records (--queries: their authors by id or name, their year); only
    reviewers of `pool_ids` when given. No model is needed: conflicts read the graph alone."""
    snapshot = GraphSnapshot.from_store(store, quiet=quiet)
    resolver = IdResolver.for_snapshot(snapshot, lookup=store.lookup_ids)
    none = np.zeros(0, dtype=np.int64)
    queries: list[Query] = []
    if paper_ids:
        papers = resolve_ids(resolver, "paper", paper_ids, "--paper", warn)
        for pid in papers.node_ids():
            i = snapshot.paper_index[pid]
            year = int(snapshot.paper_year[i]) if snapshot.paper_year[i] != NO_YEAR else None
            queries.append(Query(id=pid, text_vector=None, topic_vector=None, references=none, year=year,
                                 paper_index=i))
    for r in records:
        queries.append(Query(id=str(r["id"]), text_vector=None, topic_vector=None, references=none,
                             year=int(r["year"]) if r.get("year") is not None else None, **submission_authors(r)))
    checker = ConflictChecker(snapshot, coauthor_years=coi_years, details=read_author_details(store),
                              institution_years=institution_years)
    if pool_ids is not None:
        pool = ReviewerPool.from_snapshot(snapshot, author_ids=resolve_ids(resolver, "author", pool_ids, "--pool",
                                                                            warn).node_ids())
    else:
        pool = ReviewerPool.from_snapshot(snapshot, min_papers=1)
    rows = []
    for q in queries:
        found = checker.pool_conflicts(pool, q)
        rows += [(q.id, pool.author_ids[r], pool.names[r], found[r]) for r in sorted(found)]
    return rows

// Authors known under another id: those whose `sources` (the source ids seen, and the old id of a migrated
// one) hold one of $forms. One scan of the authors for every id asked at once.
MATCH (a:Author) WHERE a.sources IS NOT NULL AND any(s IN a.sources WHERE s IN $forms)
RETURN a.id AS id, [s IN a.sources WHERE s IN $forms] AS matched

// The graph schema: uniqueness constraints (each also backs an index on id) and lookup indexes.
// Applied by `scholargraph db init`; IF NOT EXISTS makes every statement idempotent.
CREATE CONSTRAINT paper_id IF NOT EXISTS FOR (p:Paper) REQUIRE p.id IS UNIQUE;
CREATE CONSTRAINT author_id IF NOT EXISTS FOR (a:Author) REQUIRE a.id IS UNIQUE;
CREATE CONSTRAINT venue_id IF NOT EXISTS FOR (v:Venue) REQUIRE v.id IS UNIQUE;
CREATE CONSTRAINT topic_id IF NOT EXISTS FOR (t:Topic) REQUIRE t.id IS UNIQUE;
CREATE CONSTRAINT scoring_run_id IF NOT EXISTS FOR (r:ScoringRun) REQUIRE r.id IS UNIQUE;
CREATE INDEX paper_year IF NOT EXISTS FOR (p:Paper) ON (p.year);
CREATE INDEX paper_doi IF NOT EXISTS FOR (p:Paper) ON (p.doi);
CREATE INDEX author_name IF NOT EXISTS FOR (a:Author) ON (a.name);
// Internal: a paper's source ids when its graph id is a DOI, so references by source id resolve.
CREATE CONSTRAINT paper_alias_id IF NOT EXISTS FOR (a:PaperAlias) REQUIRE a.id IS UNIQUE;
// Internal: migrations that ran on this database (one node per migration, e.g. whitespace-free ids).
CREATE CONSTRAINT migration_id IF NOT EXISTS FOR (m:Migration) REQUIRE m.id IS UNIQUE;
// Internal: the scoring-job lock (one node per lock name, leased).
CREATE CONSTRAINT job_lock_id IF NOT EXISTS FOR (l:JobLock) REQUIRE l.id IS UNIQUE;
// Scoring jobs find the papers changed since their watermark (ms since the epoch, server clock).
CREATE INDEX paper_ingested_at IF NOT EXISTS FOR (p:Paper) ON (p.ingestedAt);

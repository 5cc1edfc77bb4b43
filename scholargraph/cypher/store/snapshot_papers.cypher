// Stream every paper for a snapshot: id, year, stub flag, venue id, and (when $withText) its text.
MATCH (p:Paper)
RETURN p.id AS id, p.year AS year, coalesce(p.stub, false) AS stub, p.venueId AS venue,
       CASE WHEN $withText THEN p.title END AS title,
       CASE WHEN $withText THEN p.abstract END AS abstract

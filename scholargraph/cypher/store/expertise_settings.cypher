// The reviewers' own expertise settings (conference/profiles.py): every author that has any of them,
// with the four properties (null where unset). A label scan that returns only those authors.
MATCH (a:Author)
WHERE a.expertiseExcluded IS NOT NULL OR a.expertiseSince IS NOT NULL OR a.expertiseRecentYears IS NOT NULL
   OR a.expertiseWeights IS NOT NULL
RETURN a.id AS id, a.expertiseExcluded AS expertiseExcluded, a.expertiseSince AS expertiseSince,
       a.expertiseRecentYears AS expertiseRecentYears, a.expertiseWeights AS expertiseWeights

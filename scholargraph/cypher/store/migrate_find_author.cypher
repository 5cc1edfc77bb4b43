// Migration to whitespace-free ids: a page of authors whose id has whitespace (in id order after $after;
// $pattern is the whitespace regex). Renamed ids no longer match, so paging after the old ids ends.
MATCH (a:Author) WHERE a.id > $after AND a.id =~ $pattern
WITH a ORDER BY a.id LIMIT $limit
RETURN a.id AS id

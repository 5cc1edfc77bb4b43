// Migration to whitespace-free ids: a page of venues whose id has whitespace (in id order after $after).
MATCH (v:Venue) WHERE v.id > $after AND v.id =~ $pattern
WITH v ORDER BY v.id LIMIT $limit
RETURN v.id AS id

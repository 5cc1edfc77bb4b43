// One page of text-vector stamps, in id order after $after (the previous page's `last`; "" first): rows
// [id, semanticEncoder, semanticTextHash] of the papers encoded so far, i.e. which encoder (its key,
// "<name>@<digest>") encoded which text (its hash). `features` encodes the papers whose stamp is not the
// current encoder's key and their current text's hash.
MATCH (p:Paper) WHERE p.id > $after AND p.id <= $until
WITH p ORDER BY p.id LIMIT $limit
RETURN collect(CASE WHEN p.semanticEncoder IS NOT NULL THEN [p.id, p.semanticEncoder, p.semanticTextHash] END) AS rows,
       max(p.id) AS last

// For each given id ($rows: {given, forms}), the topics whose id is one of its forms.
UNWIND $rows AS row
MATCH (t:Topic) WHERE t.id IN row.forms
RETURN row.given AS given, collect(DISTINCT t.id) AS ids

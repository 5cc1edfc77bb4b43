// Make sure every cited paper exists: one not yet in the graph becomes a stub until its record
// arrives. A cited source id that is an alias of a DOI node resolves to that node.
// $ids is the batch's distinct cited ids; returns how many stubs this created.
UNWIND $ids AS id
OPTIONAL MATCH (al:PaperAlias {id: id})
WITH coalesce(al.paperId, id) AS target
MERGE (b:Paper {id: target})
ON CREATE SET b.stub = true, b.sgNew = true
WITH b WHERE b.sgNew
REMOVE b.sgNew
RETURN count(b) AS stubsCreated

// Make sure every cited paper exists: one not yet in the graph becomes a stub until its record
// arrives. $ids is the batch's distinct cited ids; returns how many stubs this created.
UNWIND $ids AS id
MERGE (b:Paper {id: id})
ON CREATE SET b.stub = true, b.sgNew = true
WITH b WHERE b.sgNew
REMOVE b.sgNew
RETURN count(b) AS stubsCreated

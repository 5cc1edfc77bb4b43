"""The managed local Neo4j: provision, start, stop, status, the offline importer, the Browser guide and open_store."""

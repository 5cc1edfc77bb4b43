"""Pure ranking models over graph snapshots; never imports neo4j or ingest."""

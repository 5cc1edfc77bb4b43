"""Base layer: domain records, Neo4j access, graph features."""

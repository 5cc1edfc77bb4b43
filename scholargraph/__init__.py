"""scholargraph: a Neo4j-backed scholarly analytics engine."""

__version__ = "0.1.0"

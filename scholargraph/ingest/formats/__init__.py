"""Parsers for external dump formats: file -> Iterator[RawRecord]; parse only."""

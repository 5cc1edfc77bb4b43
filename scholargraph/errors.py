"""Typed domain errors that the CLI turns into one clear line and an exit code."""

from __future__ import annotations


class ScholargraphError(Exception):
    """Base class: carries the exit code the CLI should use."""

    exit_code = 1


class InvalidRecord(ScholargraphError):
    """A source record that cannot become graph records; it goes to quarantine."""

    exit_code = 3

    def __init__(self, source: str, line: int | None, reason: str, raw: str = ""):
        self.source = source
        self.line = line
        self.reason = reason
        self.raw = raw
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {reason}")


class StoreUnavailable(ScholargraphError):
    """Neo4j cannot be reached, or refuses our credentials."""

    exit_code = 1


class StoreError(ScholargraphError):
    """Neo4j was reachable but a query failed (after the driver's retries)."""

    exit_code = 1


class ServerError(ScholargraphError):
    """The managed local Neo4j could not be provisioned, started or stopped."""

    exit_code = 1


class NotFitted(ScholargraphError):
    """A model was used before fit() or loaded from an incompatible version."""

    exit_code = 1


class UsageError(ScholargraphError):
    """Bad user input: unknown format, unreadable path, unknown id."""

    exit_code = 2

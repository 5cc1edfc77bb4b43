"""Typed domain errors that the CLI turns into one clear line and an exit code."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager


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


class DiskFull(ScholargraphError):
    """A write failed for want of space (ENOSPC, a file-size limit's EFBIG, a quota); the writer left no
    half-written file where the next run reads."""

    exit_code = 1


# A full disk, a file-size limit (RLIMIT_FSIZE) and a full quota mean the same to the user: no room.
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT})


@contextmanager
def naming_disk_full(path: str | os.PathLike) -> Iterator[None]:
    """Turns a write's "no space" OSError into DiskFull naming `path` (a write() error names no file)."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in DISK_FULL_ERRNOS:
            raise
        raise DiskFull(f"disk full: no space left writing {path} ({exc.strerror}); free some space and "
                       "run the command again") from exc

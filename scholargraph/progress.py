"""One progress-bar style for all long work: rate and ETA on stderr, silenced by --quiet."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")


def progress(iterable: Iterable[T] | None = None, *, total: int | float | None = None, desc: str = "",
             unit: str = "rec", quiet: bool = False) -> tqdm:
    """A tqdm bar showing records/s and ETA; `quiet=True` disables it entirely."""
    return tqdm(iterable, total=total, desc=desc, unit=unit, unit_scale=True, disable=quiet,
                file=sys.stderr, mininterval=0.5, dynamic_ncols=True, leave=not quiet)

"""torch's intra-op thread count for a block of code.

The ranking models train small networks (batches of a few hundred rows, 18 to a few hundred columns): split over
threads, their products cost more in coordination than they gain, and the summation order then depends on the
machine's core count, so the same seed trains a different model on a laptop and on a CI runner."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """torch's intra-op threads set to n for the block (a process-wide setting, restored afterwards); 0 leaves
    torch's own setting."""
    before = torch.get_num_threads()
    if n and n != before:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if n and n != before:
            torch.set_num_threads(before)


__all__ = ["torch_threads"]

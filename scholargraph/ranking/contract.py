"""The contract every trained model keeps: fit returns the model, score, save returns where, load is a classmethod."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol, Self, runtime_checkable


@runtime_checkable
class Ranker(Protocol):
    """What the services and jobs rely on; each model's hyperparameters are one dataclass (`params`)."""

    params: Any

    def fit(self, *args: Any, **kwargs: Any) -> Self: ...

    def score(self, *args: Any, **kwargs: Any) -> Any: ...

    def save(self, directory: str | os.PathLike) -> Path: ...

    @classmethod
    def load(cls, directory: str | os.PathLike) -> Self: ...

"""The synthetic scholarly world with planted ground truth; `generate(SynthParams(...), out_dir)` writes one."""

from scholargraph.synth.params import SynthParams
from scholargraph.synth.world import generate

__all__ = ["SynthParams", "generate"]

"""Synthetic benchmark datasets: realistic qrels and runs, generated in chunks."""

from fasteval.datasets.synth import SynthSpec, generate, iter_blocks, write_synth

__all__ = ["SynthSpec", "generate", "iter_blocks", "write_synth"]

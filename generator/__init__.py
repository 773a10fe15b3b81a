"""Synthetic OCR'd book corpora with exact ground truth (`bookdup generate`).

Works are fresh prose from word models derived from real texts; their books are editions,
reprints, exact copies, noisy scans, volumes, anthologies and dictionary translations, and
``ground_truth.jsonl`` states the relation of every pair that shares text.
"""

from generator.corpus import CorpusSummary, GeneratorConfig, generate_corpus
from generator.noise import add_noise
from generator.truth import RELATIONS, BookRecord, Segment, ground_truth, relation

__all__ = [
    "RELATIONS",
    "BookRecord",
    "CorpusSummary",
    "GeneratorConfig",
    "Segment",
    "add_noise",
    "generate_corpus",
    "ground_truth",
    "relation",
]

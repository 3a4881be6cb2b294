"""NDCG@10 and MAP of one rerun folder against its lambdarank, Holm's correction over its methods:
the MSLR-shaped study's summary (``../mslr_trees_tuned/summarise.py``) on the two metrics these runs
recorded.

Usage: python summarise.py ohsumed > ohsumed/summary.md
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "mslr_trees_tuned"))
import summarise  # noqa: E402

summarise.METRICS = (("ndcg@10", "NDCG@10"), ("map", "MAP"))

if __name__ == "__main__":
    summarise.main()

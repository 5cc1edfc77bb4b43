"""Citeomatic citation recommendation (NNSelect + NNRank) and the BM25 baseline."""

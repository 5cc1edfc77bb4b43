"""RECO-Rank reviewer recommendation and the CoF baseline."""

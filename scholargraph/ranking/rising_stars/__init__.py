"""IIRL rising-star prediction and its baselines."""

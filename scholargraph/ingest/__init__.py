"""External formats -> records -> store."""

// The start (ms since the epoch) of the oldest transaction still open that began before $before, or null.
// Its writes carry a change time (Paper.ingestedAt) from before it commits, so a watermark read meanwhile
// must stay below it.
SHOW TRANSACTIONS YIELD startTime
WHERE datetime(startTime).epochMillis < $before
RETURN min(datetime(startTime).epochMillis) AS started

// The server's clock (ms since the epoch): the watermark of a scoring run, comparable with Paper.ingestedAt.
RETURN timestamp() AS now

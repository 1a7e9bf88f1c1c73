"""Table data ("persist" shards): Parquet batches of updates, compaction, reads. pyarrow
only — no DuckDB, no Spark."""

"""Readers and writers: TREC text, parquet, CSV/TSV, JSONL, data frames, Arrow tables, dicts."""

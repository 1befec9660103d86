"""Embeddings computed by the pipeline: the `embeddings` model config, the LanceDB embedding functions
it names, and the table metadata through which LanceDB searches the table by text.

No dbt here: Spark's Python workers import `functions` to embed their batches (docs/lance-features.md,
"Embeddings"). The Spark plan of a build (which rows to embed, which vectors to keep) is
`materializations/embedding_run.py`.
"""

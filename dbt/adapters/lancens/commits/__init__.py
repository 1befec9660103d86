"""Where every table write ends: one Lance commit (or, during an atomic-publish run, one staged
version) through the namespace engine, then one refresh of Spark's catalog by the runtime.

``hook`` and ``landing`` are imported by name in Spark's Python workers (the ``lance`` data
source's commit hook for catalog-table INSERTs), so they import the engine only, never dbt.
"""

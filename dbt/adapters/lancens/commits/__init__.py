"""Where every table write ends: one Lance commit (or, during an atomic-publish run, one staged
version) through the namespace engine.

``hook`` and ``staging`` are imported by name in Spark's Python workers (the ``lance`` data
source's commit hook), so they import the engine only, never dbt.
"""

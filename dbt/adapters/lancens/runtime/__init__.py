"""The process runtime: one Spark session and namespace engine per profile target (`process`), how
the process reaches Spark (`spark_backends`, `jvm`, `session_catalog`), the plans and statements it
reads back (`plans`, `connect_parse`), errors, and how a write lands (`landing`: committed at once,
or staged by an atomic-publish run's `RunPublisher` in `staging`; `hook` for catalog-table INSERTs).

Imports only `definitions/`, `spark/` and `namespace/`. ``hook`` and ``landing`` are imported by
name in Spark's Python workers, so they import the engine only, never dbt.
"""

"""What every floor above shares and nothing here depends on: names (schema ↔ namespace ↔ Spark
database, quoting), the relation and column types, the profile's credentials, SQL script splitting,
and the parsing of the `indexes` and `lance_maintenance` model configs.

Imports only `spark/` and `namespace/` below it (and dbt's own base classes)."""

"""How dbt's materializations build Lance tables: incremental strategies and the row-level changes
they reduce to, seeds, snapshots, schema evolution, Python models."""

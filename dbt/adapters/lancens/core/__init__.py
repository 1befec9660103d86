"""The adapter's face and process state: the dbt adapter class, connections, profile, relations,
columns, names, errors, and the runtime (one Spark session and namespace engine per process)."""

"""What the namespace knows and dbt asks about: schemas, relations, the docs catalog, persisted
descriptions, table versions and registration, and `dbt debug`'s report."""

"""SQL statements the adapter carries out through the engine instead of handing them to Spark:
row-level DML (UPDATE, DELETE) and DDL on namespace objects."""

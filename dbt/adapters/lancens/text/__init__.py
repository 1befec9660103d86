"""How the package reads and writes small pieces of text: yes/no values and back-quoted
identifiers. The lowest floor, plain Python: the engine, the data source (in Spark's workers too)
and the adapter all read them the same way, without importing one another."""

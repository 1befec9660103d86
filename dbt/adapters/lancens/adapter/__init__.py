"""The adapter's dbt face: the adapter class dbt calls (`impl`), its connection manager, the
atomic-publish request read from the project, and the macro arguments it checks. Top floor: it may
import every package below it, and none of them imports it."""

"""Relations: a dbt schema is a namespace path, rendered in SQL as its Spark database name."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dbt.adapters.contracts.relation import ComponentName
from dbt.adapters.spark.relation import SparkRelation

from dbt.adapters.lancens.core.names import schema_to_namespace
from dbt.adapters.lancens.spark.catalog import database_name


@dataclass(frozen=True, eq=False, repr=False)
class LancensRelation(SparkRelation):
    """A table or view in the namespace; `schema` keeps dbt's dotted form (`analytics.marts`).

    `database` is the namespace root's name (the profile's `database`): carried for dbt's cache and
    catalog, never rendered (Spark's include policy leaves it out)."""

    def __post_init__(self) -> None:
        """dbt-spark refuses a database other than the schema; here it names the root instead."""

    def _render_iterator(self) -> Iterator[tuple[ComponentName | None, str | None]]:
        for key, part in super()._render_iterator():
            if key == ComponentName.Schema and part is not None:
                part = self.spark_database
                if self.quote_policy.get_part(key):
                    part = self.quoted(part)
            yield key, part

    @property
    def is_temporary_view(self) -> bool:
        """A one-part name (dbt-spark's `make_temp_relation`): a Spark temporary view, not in the namespace.

        dbt's unit tests and temporary relations build these with `create temporary view`."""
        return not self.include_policy.schema

    @property
    def namespace_id(self) -> list[str]:
        return schema_to_namespace(self.schema or "")

    @property
    def table_id(self) -> list[str]:
        return [*self.namespace_id, self.identifier or ""]

    @property
    def spark_database(self) -> str:
        return database_name(self.namespace_id)

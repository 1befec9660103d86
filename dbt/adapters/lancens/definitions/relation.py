"""Relations: a dbt schema is a namespace path, rendered in SQL as its Spark database name."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Self

from dbt.adapters.contracts.relation import ComponentName, HasQuoting, RelationConfig
from dbt.adapters.spark.relation import SparkRelation
from dbt_common.exceptions import CompilationError, DbtRuntimeError

from dbt.adapters.lancens.definitions.index_config import IndexConfigError, parse_indexes
from dbt.adapters.lancens.definitions.maintenance_config import MaintenanceConfigError, parse_maintenance
from dbt.adapters.lancens.definitions.names import database_name, schema_to_namespace, table_id
from dbt.adapters.lancens.embeddings.config import EmbeddingConfigError, parse_embeddings

# Nodes that have a relation but never name a table (dbt names an on-run-start hook
# `<project>-on-run-start-0`): their names are not checked.
_NOT_TABLES = frozenset({"operation", "analysis"})


@dataclass(frozen=True, eq=False, repr=False)
class LancensRelation(SparkRelation):
    """A table or view in the namespace; `schema` keeps dbt's dotted form (`analytics.marts`).

    `database` is the namespace root's name (the profile's `database`): carried for dbt's cache and
    catalog, never rendered (Spark's include policy leaves it out)."""

    def __post_init__(self) -> None:
        """dbt-spark refuses a database other than the schema; here it names the root instead."""

    @classmethod
    def create_from(cls, quoting: HasQuoting, relation_config: RelationConfig, **kwargs: Any) -> Self:
        """The relation of a dbt node (model, seed, snapshot, source, stored test failures).

        dbt calls this when it parses the project, so a schema or alias that cannot name a
        namespace table fails there, naming the node, before any connection or Spark starts.

        The relation's identifier is the table's name in the namespace (`Good` becomes `good`):
        dbt's check that no two nodes share a database representation then sees two nodes that
        name one table and fails the parse naming both, where the second build would have
        replaced the first's rows. An ephemeral model names no table and keeps its spelling. A data
        test names a table only when its failures are stored: its name's length is checked then,
        at the write (13), not here."""
        relation = super().create_from(quoting, relation_config, **kwargs)
        resource_type = getattr(relation_config, "resource_type", None)
        if relation.type == cls.CTE or resource_type in _NOT_TABLES:
            return relation
        try:
            table = table_id(
                relation.schema or "", relation.identifier or "", check_length=resource_type != "test"
            )
        except DbtRuntimeError as exc:
            what = "identifier" if resource_type == "source" else "alias"
            raise CompilationError(
                f"{exc.msg} (schema {relation.schema!r}, {what} {relation.identifier!r})",
                node=relation_config,
            ) from exc
        _check_lance_configs(relation_config)
        if _config(relation_config).get("materialized") == "ephemeral":
            return relation
        return relation.replace_path(identifier=table[-1])

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
        """The namespace id (lower-cased, see `names`); raises for a name no table can have."""
        return table_id(self.schema or "", self.identifier or "")

    @property
    def spark_database(self) -> str:
        return database_name(self.namespace_id)


def _config(relation_config: RelationConfig) -> Any:
    """A node's config, or an empty one for a relation config without one."""
    config = getattr(relation_config, "config", None)
    return config if config is not None and hasattr(config, "get") else {}


def _check_lance_configs(relation_config: RelationConfig) -> None:
    """A node's `indexes` and `lance_maintenance` configs are read while dbt parses: an unknown key,
    type or value fails there, naming the node."""
    config = _config(relation_config)
    try:
        parse_indexes(config.get("indexes"))
        parse_maintenance(config.get("lance_maintenance"))
        parse_embeddings(config.get("embeddings"))
    except (IndexConfigError, MaintenanceConfigError, EmbeddingConfigError) as exc:
        raise CompilationError(str(exc), node=relation_config) from exc

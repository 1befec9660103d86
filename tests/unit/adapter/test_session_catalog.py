"""The runtime mirrors a real directory namespace into Spark's session catalog, lazily and after writes."""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.runtime.process import LancensRuntime


@pytest.fixture
def runtime(spark, tmp_path: Path) -> LancensRuntime:
    runtime = LancensRuntime.shared({"root": str(tmp_path / "root")}, "local[2]", {})
    ns = runtime.namespace
    ns.create_namespace(["shop"])
    ns.create_namespace(["shop", "eu"])
    ns.create_table(["shop", "orders"], pa.table({"id": [1, 2, 3], "amount": [1.5, 2.5, 3.5]}))
    ns.create_table(["shop", "eu", "stores"], pa.table({"store": ["paris", "rome"]}))
    ns.create_view(["shop", "big_orders"], "SELECT * FROM shop.orders WHERE amount > 2")
    return runtime


def test_queries_register_tables_views_and_nested_databases_on_first_use(runtime: LancensRuntime) -> None:
    spark = runtime.spark
    assert runtime.sql("SELECT count(*) AS n FROM shop.big_orders").first().n == 2  # view, then its table
    assert spark.catalog.getTable("shop.big_orders").tableType == "VIEW"
    assert spark.catalog.tableExists("shop.orders")
    stores = runtime.sql("SELECT store FROM shop__eu.stores ORDER BY store").collect()
    assert [row.store for row in stores] == ["paris", "rome"]


def test_insert_into_a_registered_table_commits_through_the_namespace(runtime: LancensRuntime) -> None:
    runtime.refresh_table(["shop", "orders"])
    runtime.refresh_table(["shop", "orders"])  # idempotent
    assert runtime.sql("SELECT sum(id) AS s FROM shop.orders").first().s == 6
    runtime.sql("INSERT INTO shop.orders VALUES (4, 4.5)")
    info = runtime.namespace.describe_table(["shop", "orders"])
    assert info.version == 2
    assert lance.dataset(info.location).count_rows() == 4


def test_refresh_forgets_dropped_and_declared_only_tables(runtime: LancensRuntime) -> None:
    namespace: DirectoryNamespace = runtime.namespace
    spark = runtime.spark
    runtime.refresh_table(["shop", "orders"])
    namespace.declare_table(["shop", "later"])
    runtime.refresh_table(["shop", "later"])
    assert not spark.catalog.tableExists("shop.later")
    namespace.deregister_table(["shop", "orders"])
    runtime.refresh_table(["shop", "orders"])
    assert not spark.catalog.tableExists("shop.orders")
    assert not namespace.table_exists(["shop", "orders"])


def test_a_database_no_namespace_maps_to_keeps_sparks_own_error(runtime: LancensRuntime) -> None:
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
        runtime.sql("SELECT * FROM `_odd_`.t")


def test_a_write_that_keeps_location_and_schema_keeps_the_catalog_entry(runtime: LancensRuntime) -> None:
    """Re-creating the entry after every write is a DROP, a CREATE and a schema worker; the entry
    reads the latest version at planning, so it is kept until the schema or location changes."""
    namespace, spark, table = runtime.namespace, runtime.spark, ["shop", "orders"]
    runtime.refresh_table(table)
    statements: list[str] = []
    run_sql = runtime.catalog._sql
    runtime.catalog._sql = lambda statement: statements.append(statement) or run_sql(statement)  # type: ignore[method-assign]

    location = namespace.describe_table(table).location
    lance.write_dataset(pa.table({"id": [4], "amount": [4.5]}), location, mode="append")
    runtime.refresh_table(table)
    assert statements == []  # kept, and still reads the new rows
    assert runtime.sql("SELECT count(*) AS n FROM shop.orders").first().n == 4

    lance.write_dataset(pa.table({"id": [5], "note": ["new"]}), location, mode="overwrite")
    runtime.refresh_table(table)
    # a new schema: a new entry (dropped, then created with the new schema)
    assert any(s.startswith("DROP TABLE") for s in statements)
    assert spark.table("shop.orders").columns == ["id", "note"]
    assert [tuple(r) for r in runtime.sql("SELECT * FROM shop.orders").collect()] == [(5, "new")]

    spark.sql("DROP TABLE shop.orders")  # behind the catalog's back
    runtime.refresh_table(table)
    assert spark.catalog.tableExists("shop.orders")  # made again
    assert [tuple(r) for r in runtime.sql("SELECT * FROM shop.orders").collect()] == [(5, "new")]


def test_a_cached_table_serves_the_new_version_after_a_write(runtime: LancensRuntime) -> None:
    """`CACHE TABLE` (in a hook, say) keeps the rows it read; a commit that keeps the catalog
    entry must not leave Spark serving them."""
    table = ["shop", "orders"]
    runtime.refresh_table(table)
    runtime.sql("CACHE TABLE shop.orders")
    assert runtime.sql("SELECT count(*) AS n FROM shop.orders").first().n == 3
    location = runtime.namespace.describe_table(table).location
    lance.write_dataset(pa.table({"id": [4], "amount": [4.5]}), location, mode="append")
    runtime.refresh_table(table)
    assert runtime.sql("SELECT count(*) AS n FROM shop.orders").first().n == 4
    assert runtime.spark.catalog.isCached("shop.orders")  # cached again, from the new version

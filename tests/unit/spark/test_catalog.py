"""Mirroring a real directory namespace into Spark's session catalog."""

from __future__ import annotations

from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.spark.catalog import (
    database_name,
    forget_table,
    namespace_id,
    sync_all,
    sync_namespace,
    sync_table,
)


@pytest.mark.parametrize(
    "levels", [[], ["sales"], ["sales", "eu"], ["a_b", "c1", "d"], ["a__b"], ["a___b", "c__d", "e"]]
)
def test_database_names_are_reversible(levels: list[str]) -> None:
    assert namespace_id(database_name(levels)) == levels


@pytest.mark.parametrize("bad", ["_a", "a_", "Sales", ""])
def test_ambiguous_levels_are_rejected_by_name(bad: str) -> None:
    with pytest.raises(ValueError, match=repr(bad)):
        database_name(["ok", bad])


def test_top_level_default_is_reserved_for_the_root() -> None:
    with pytest.raises(ValueError, match="'default'"):
        database_name(["default"])


@pytest.fixture
def namespace(tmp_path: Path) -> DirectoryNamespace:
    ns = DirectoryNamespace(str(tmp_path / "root"), manifest_enabled=True, dir_listing_enabled=True)
    ns.create_namespace(["shop"])
    ns.create_namespace(["shop", "eu"])
    ns.create_table(["shop", "orders"], pa.table({"id": [1, 2, 3], "amount": [1.5, 2.5, 3.5]}))
    ns.create_table(["shop", "eu", "stores"], pa.table({"store": ["paris", "rome"]}))
    ns.create_view(["shop", "big_orders"], "SELECT * FROM shop.orders WHERE amount > 2")
    return ns


def test_sync_table_reads_and_inserts_through_the_namespace(spark, namespace: DirectoryNamespace) -> None:
    assert sync_table(spark, namespace, ["shop", "orders"])
    assert sync_table(spark, namespace, ["shop", "orders"])  # idempotent
    assert spark.sql("SELECT sum(id) AS s FROM shop.orders").first().s == 6
    spark.sql("INSERT INTO shop.orders VALUES (4, 4.5)")
    info = namespace.describe_table(["shop", "orders"])
    assert info.version == 2
    assert lance.dataset(info.location).count_rows() == 4


def test_sync_namespace_and_nested_database(spark, namespace: DirectoryNamespace) -> None:
    sync_namespace(spark, namespace, ["shop"])
    sync_namespace(spark, namespace, ["shop", "eu"])
    assert spark.sql("SELECT count(*) AS n FROM shop.big_orders").first().n == 2
    assert [r.store for r in spark.sql("SELECT store FROM shop__eu.stores ORDER BY store").collect()] == [
        "paris",
        "rome",
    ]


def test_sync_all_and_forget(spark, namespace: DirectoryNamespace) -> None:
    namespace.declare_table(["shop", "later"])
    sync_all(spark, namespace)
    assert spark.catalog.tableExists("shop__eu.stores")
    assert spark.catalog.getTable("shop.big_orders").tableType == "VIEW"
    assert not spark.catalog.tableExists("shop.later")
    forget_table(spark, ["shop", "orders"])
    assert not spark.catalog.tableExists("shop.orders")
    assert namespace.table_exists(["shop", "orders"])

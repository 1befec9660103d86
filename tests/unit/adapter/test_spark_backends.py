"""The Connect backend registers each relation a statement names once per process; a local one never
needs to (Spark reports what is missing and the runtime registers it then)."""

from __future__ import annotations

from dbt.adapters.lancens.runtime.spark_backends import ConnectSpark, LocalSpark

STATEMENT = "select o.id from Sales__EU.Orders o join analytics.customers c on o.id = c.id"


def test_connect_names_each_relation_once_in_namespace_ids() -> None:
    backend = ConnectSpark("sc://127.0.0.1:15002", {})
    assert backend.relations_to_register(STATEMENT) == [
        ["o", "id"],  # column references look alike; the runtime finds no such object and moves on
        ["sales", "eu", "orders"],
        ["analytics", "customers"],
        ["c", "id"],
    ]
    assert backend.relations_to_register(STATEMENT) == []
    assert backend.relations_to_register("select * from analytics.customers, analytics.orders") == [
        ["analytics", "orders"]
    ]


def test_connect_skips_what_this_process_registered_itself() -> None:
    backend = ConnectSpark("sc://127.0.0.1:15002", {})
    backend.note_registered(["sales", "eu", "orders"])
    assert backend.relations_to_register("select * from sales__eu.orders") == []


def test_connect_skips_names_no_namespace_maps() -> None:
    backend = ConnectSpark("sc://127.0.0.1:15002", {})
    assert backend.relations_to_register("select * from `a.b`.t") == []


def test_local_registers_lazily() -> None:
    backend = LocalSpark("local[1]", {})
    assert backend.relations_to_register(STATEMENT) == []
    assert backend.reuses_catalog_entries and not ConnectSpark("sc://x", {}).reuses_catalog_entries

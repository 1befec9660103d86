"""The checked SELECT a contracted model is built from, and dbt's warnings, without Spark."""

from __future__ import annotations

import pytest
from dbt_common.events.base_types import EventMsg
from dbt_common.events.event_manager_client import add_callback_to_manager

from dbt.adapters.lancens.materializations.contracts import contract_of

COLUMNS = {
    "id": {
        "name": "id",
        "data_type": "int",
        "constraints": [
            {"type": "not_null"},
            {"type": "check", "expression": "id > 0"},
            {"type": "primary_key"},
        ],
    },
    "from": {"name": "from", "data_type": "string", "quote": True, "constraints": [{"type": "not_null"}]},
    "note": {"name": "note", "data_type": "string", "constraints": []},
}
MODEL_CONSTRAINTS = [
    {"type": "check", "expression": "note != 'it''s'", "name": "no_its"},
    {"type": "not_null", "columns": ["note"]},
    {"type": "unique", "columns": ["id"]},
]


def _quote(name: str) -> str:
    return f"`{name}`"


def test_columns_in_yaml_order_with_null_checks_before_checks() -> None:
    contract = contract_of(COLUMNS, MODEL_CONSTRAINTS, _quote)
    assert contract.columns == ("id", "`from`", "note")
    assert contract.not_null == ("id", "from", "note")
    assert [check.condition for check in contract.checks] == [
        "id is null",
        "`from` is null",
        "note is null",
        "not coalesce(id > 0, true)",
        "not coalesce(note != 'it''s', true)",
    ]
    assert contract.checks[-1].message == "CHECK constraint no_its: note != 'it''s' violated"


def test_checked_select_escapes_messages_for_spark() -> None:
    select = contract_of(COLUMNS, MODEL_CONSTRAINTS, _quote).checked_select("select 1 as id")
    assert select.startswith("select id, `from`, note from (\nselect 1 as id\n) as model_subq\nwhere case\n")
    # Spark string literals unescape backslashes: a quote in a message is \'
    assert "raise_error('CHECK constraint no_its: note != \\'it\\'\\'s\\' violated')" in select
    assert select.endswith("    else true\nend")


def test_no_checks_no_filter() -> None:
    columns = {"a": {"name": "a", "data_type": "int", "constraints": [{"type": "unique"}]}}
    assert contract_of(columns, [], _quote).checked_select("select 1 as a") == (
        "select a from (\nselect 1 as a\n) as model_subq"
    )


@pytest.fixture
def warnings() -> list[str]:
    seen: list[str] = []

    def record(event: EventMsg) -> None:
        if event.info.level == "warn":
            seen.append(event.info.msg)

    add_callback_to_manager(record)
    return seen


def test_custom_constraints_warn_they_are_not_supported(warnings: list[str]) -> None:
    columns = {"a": {"name": "a", "data_type": "int", "constraints": [{"type": "custom", "expression": "x"}]}}
    contract = contract_of(columns, [], _quote)
    assert contract.checks == ()
    assert any("The constraint type custom is not supported by lancens" in w for w in warnings)


def test_columns_named_in_another_case_are_one_column() -> None:
    """Spark resolves `Amount` and `amount` to one column: the contract selects it once (the last
    entry's spelling) and a model-level not_null in any case checks it."""
    columns = {
        "amount": {"name": "amount", "data_type": "int", "constraints": []},
        "Amount": {"name": "Amount", "data_type": "int", "quote": True, "constraints": []},
    }
    contract = contract_of(columns, [{"type": "not_null", "columns": ["AMOUNT"]}], _quote)
    assert contract.columns == ("`Amount`",)
    assert [check.condition for check in contract.checks] == ["`Amount` is null"]

"""Spark's column-name rule, in the one place that writes it (`spark/column_names.py`)."""

from __future__ import annotations

import pytest

from dbt.adapters.lancens.spark.column_names import ColumnMap, column_names, fold


def test_a_name_in_another_case_finds_the_schema_spelling() -> None:
    names = column_names(["Event_TS", "amount"])
    assert names.get("event_ts") == "Event_TS"
    assert names["AMOUNT"] == "amount"
    assert "EVENT_ts" in names
    assert "missing" not in names
    assert names.get("missing") is None


def test_an_exact_spelling_wins_over_another_case() -> None:
    # Lance allows `a` and `A` side by side; each is still found by its own spelling
    names = ColumnMap([("A", 1), ("a", 2)])
    assert names["A"] == 1
    assert names["a"] == 2
    assert names.get("b") is None


def test_in_another_case_the_first_given_spelling_wins() -> None:
    sizes = ColumnMap([("Vec", 4), ("VEC", 8)])
    assert sizes["vec"] == 4
    assert list(sizes) == ["Vec", "VEC"]


def test_iteration_keeps_the_given_spellings_in_order_without_repeats() -> None:
    names = column_names(["b", "A", "b"])
    assert list(names) == ["b", "A"]
    assert len(names) == 2
    assert dict(ColumnMap([("x", 1), ("x", 2)])) == {"x": 1}


def test_a_missing_name_raises_key_error() -> None:
    with pytest.raises(KeyError):
        column_names(["a"])["b"]


def test_fold_is_the_key_names_share() -> None:
    assert fold("Event_TS") == fold("event_ts") == "event_ts"

"""Arguments from vars and run-operation args are read strictly: a typo fails naming the argument
instead of silently turning a feature off."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lancens.adapter.impl import LancensAdapter
from dbt.adapters.lancens.adapter.macro_arguments import days_or_none, flag, whole_number_or_none


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        (None, False),
        ("true", True),
        ("TRUE", True),
        ("1", True),
        (1, True),
        ("yes", True),
        ("on", True),
        ("false", False),
        ("0", False),
        (0, False),
        ("no", False),
    ],
)
def test_flag_spellings(value: object, expected: bool) -> None:
    assert flag(value, "var x") is expected


@pytest.mark.parametrize("value", ["ture", "", "2", 2, "enabled"])
def test_flag_refuses_what_means_nothing(value: object) -> None:
    with pytest.raises(DbtRuntimeError, match=r"var lancens_atomic_publish must be true or false, got"):
        flag(value, "var lancens_atomic_publish")


def test_numbers() -> None:
    assert whole_number_or_none(None, "n") is None and whole_number_or_none("3", "n") == 3
    assert days_or_none("1.5", "d") == timedelta(days=1.5) and days_or_none(None, "d") is None
    for bad in (True, "-1", "2.5", "many"):
        with pytest.raises(DbtRuntimeError, match="retain_versions must be a whole number"):
            whole_number_or_none(bad, "retain_versions")
    with pytest.raises(DbtRuntimeError, match="older_than_days must be a number of days, got 'week'"):
        days_or_none("week", "older_than_days")


def test_adapter_quote_doubles_backticks() -> None:
    """dbt's constraint and column rendering quotes through the adapter; a backtick in a column
    name must not end the identifier."""
    assert LancensAdapter.quote("plain") == "`plain`"
    assert LancensAdapter.quote("odd`name") == "`odd``name`"

"""One reading of yes/no and one back-quoting, shared by the engine, the data source and the adapter."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lancens.adapter.macro_arguments import flag
from dbt.adapters.lancens.namespace import errors
from dbt.adapters.lancens.namespace.config import parse_bool
from dbt.adapters.lancens.spark.options import LanceOptions
from dbt.adapters.lancens.text.quoting import quote, quote_path, unquote
from dbt.adapters.lancens.text.yes_no import yes_or_no

YES = ["true", "TRUE", "True", "1", "yes", "YES", "y", "on", " On "]
NO = ["false", "FALSE", "False", "0", "no", "NO", "n", "off"]
NEITHER = ["ture", "", "2", "enabled", "maybe"]


@pytest.mark.parametrize(("value", "expected"), [*((v, True) for v in YES), *((v, False) for v in NO)])
def test_every_reader_agrees(value: str, expected: bool) -> None:
    assert yes_or_no(value) is expected
    assert parse_bool(value, "manifest_enabled") is expected
    assert flag(value, "var x") is expected
    options = LanceOptions.parse({"path": "/t", "filter_pushdown": value})
    assert options.filter_pushdown is expected


@pytest.mark.parametrize("value", NEITHER)
def test_every_reader_refuses_in_its_own_words(value: str) -> None:
    assert yes_or_no(value) is None
    with pytest.raises(errors.InvalidInputError, match="property 'p' must be true or false"):
        parse_bool(value, "p")
    with pytest.raises(DbtRuntimeError, match="var x must be true or false"):
        flag(value, "var x")


def test_quoting() -> None:
    assert quote("a`b") == "`a``b`"
    assert unquote(quote("a`b")) == "a`b"
    assert quote_path(["s", "x y"]) == "`s`.`x y`"

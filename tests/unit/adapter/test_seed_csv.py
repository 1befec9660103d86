"""Seed CSV parsing without dbt: delimiter and column-name checks fail before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt_common.exceptions import CompilationError

from dbt.adapters.lancens.materializations.seeds import read_seed_csv


def _csv(tmp_path: Path, text: str) -> str:
    path = tmp_path / "seed.csv"
    path.write_text(text)
    return str(path)


def test_delimiter_must_be_one_character(spark, tmp_path: Path) -> None:
    path = _csv(tmp_path, "a,b\n1,2\n")
    for delimiter in ("", ";;"):
        with pytest.raises(CompilationError, match="exactly one character"):
            read_seed_csv(spark, path, delimiter=delimiter)


def test_unquoted_names_must_be_identifiers(spark, tmp_path: Path) -> None:
    path = _csv(tmp_path, "id|name\n1|a\n")  # read with the wrong delimiter: one column `id|name`
    with pytest.raises(ValueError, match=r"Syntax error in seed .*\['id\|name'\]"):
        read_seed_csv(spark, path, delimiter=",", quote_columns=False)
    # quoted (or unset) column names are stored as written
    assert read_seed_csv(spark, path, delimiter=",", quote_columns=True).column_names == ["id|name"]
    assert read_seed_csv(spark, path, delimiter="|", quote_columns=False).to_pylist() == [
        {"id": 1, "name": "a"}
    ]

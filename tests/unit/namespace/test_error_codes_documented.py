"""Every error code the engine can raise is in the README's error table, with what to do about it.

A user meets these codes in dbt's output ("Lance namespace error 12: ..."); a code missing from the
table leaves them with a number and no explanation (a lost atomic publish once surfaced as a bare 12).
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from dbt.adapters.lancens.namespace import errors

README = Path(__file__).resolve().parents[3] / "README.md"
HEADER = "| code | error | you meet it when | what to do |"


def _documented() -> dict[int, list[str]]:
    """The README error table's rows by code: [error, when, what to do]."""
    lines = README.read_text().splitlines()
    start = lines.index(HEADER) + 2  # past the header and its |---| line
    rows: dict[int, list[str]] = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        code, *cells = (cell.strip() for cell in line.strip("|").split("|"))
        rows[int(code)] = cells
    return rows


def _engine_codes() -> dict[int, str]:
    """Code -> spec name of every NamespaceError class the engine defines."""
    return {
        cls.code: re.sub(r"Error$", "", name)
        for name, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, errors.NamespaceError) and cls is not errors.NamespaceError
    }


def test_every_engine_error_code_is_in_the_readme_table_with_what_to_do() -> None:
    documented = _documented()
    engine = _engine_codes()
    missing = set(engine) - set(documented)
    assert not missing, f"codes missing from README's table: {missing}"
    for code, name in engine.items():
        error, when, what_to_do = documented[code]
        assert error == name, (code, error, name)
        assert when and what_to_do, code


def test_the_table_lists_no_code_the_engine_does_not_raise() -> None:
    assert set(_documented()) == set(_engine_codes())

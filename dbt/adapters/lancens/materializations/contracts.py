"""Model contracts (`contract: {enforced: true}`) on Lance tables.

dbt checks a contracted model's column names and types before the build (its standard contract
error); this module turns the constraints into what Lance and Spark can enforce while the rows are
written, in the same pass that writes them:

* `not_null` (column- or model-level): a NULL in the column fails the build, and the column is
  written as a non-nullable Lance field (`spark.types.lance_write_schema`), so later writes by any
  tool must respect it too;
* `check`: a row for which the expression is false (SQL semantics: NULL passes) fails the build;
* `primary_key`, `unique`, `foreign_key`: not enforced, with dbt's warning (Lance has no such
  constraints: `CONSTRAINT_SUPPORT` in the adapter says so, and dbt's own constraint rendering
  fires the warning); `custom`: not supported (there is no DDL to put it in), with dbt's warning.

A failing row raises `raise_error` inside the Spark job that writes the table, so the write is
aborted before the Lance commit: nothing is written and the previous version stays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dbt.adapters.events.types import ConstraintNotSupported
from dbt_common.contracts.constraints import (
    ColumnLevelConstraint,
    ConstraintType,
    ModelLevelConstraint,
)
from dbt_common.events.functions import warn_or_error

from dbt.adapters.lancens.definitions.sql_text import spark_string
from dbt.adapters.lancens.spark.column_names import fold


@dataclass(frozen=True)
class Check:
    """A condition every written row must not make false, and the error a violating row raises."""

    condition: str
    message: str


@dataclass(frozen=True)
class Contract:
    """What a contracted model's rows are checked against before they become a Lance version."""

    columns: tuple[str, ...]  # YAML order, quoted where the YAML says `quote: true`
    not_null: tuple[str, ...]  # column names (as written in Lance)
    checks: tuple[Check, ...]

    def checked_select(self, sql: str) -> str:
        """The model's rows in YAML column order, each one checked as it is written."""
        select = f"select {', '.join(self.columns)} from (\n{sql}\n) as model_subq"
        if not self.checks:
            return select
        cases = "\n".join(
            f"    when {check.condition} then raise_error({spark_string(check.message)})"
            for check in self.checks
        )
        return f"{select}\nwhere case\n{cases}\n    else true\nend"


def contract_of(
    columns: Mapping[str, Mapping[str, Any]],
    model_constraints: Iterable[Mapping[str, Any]],
    quote: Callable[[str], str],
) -> Contract:
    """The contract of a model from dbt's `model.columns` and `model.constraints`."""
    rendered: dict[str, str] = {}  # one column per name as Spark resolves it (the last entry wins)
    for column in columns.values():
        name = column["name"]
        rendered[fold(name)] = quote(name) if column.get("quote") else name
    not_null: list[str] = []
    checks: list[Check] = []
    for column in columns.values():
        for raw in column.get("constraints") or []:
            constraint = ColumnLevelConstraint.from_dict(raw)
            if constraint.type == ConstraintType.not_null:
                not_null.append(column["name"])
            _collect(constraint, checks)
    for raw in model_constraints:
        model_constraint = ModelLevelConstraint.from_dict(raw)
        if model_constraint.type == ConstraintType.not_null:
            not_null.extend(_unquoted(name) for name in model_constraint.columns)
        _collect(model_constraint, checks)
    null_checks = [
        Check(f"{rendered.get(fold(name), name)} is null", f"NOT NULL constraint violated for column {name}")
        for name in dict.fromkeys(not_null)
    ]
    return Contract(tuple(rendered.values()), tuple(dict.fromkeys(not_null)), (*null_checks, *checks))


def _collect(constraint: ColumnLevelConstraint, checks: list[Check]) -> None:
    """Add a `check` constraint's check; warn that a `custom` one is not applied."""
    if constraint.type == ConstraintType.check and constraint.expression:
        checks.append(_check(constraint.expression, constraint.name))
    elif constraint.type == ConstraintType.custom and constraint.warn_unsupported:
        warn_or_error(ConstraintNotSupported(constraint=constraint.type.value, adapter="lancens"))


def _check(expression: str, name: str | None) -> Check:
    label = f"{name}: {expression}" if name else expression
    return Check(f"not coalesce({expression}, true)", f"CHECK constraint {label} violated")


def _unquoted(name: str) -> str:
    return name.strip('`"')

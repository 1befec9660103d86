"""Arguments that reach the adapter from macros: `--vars`, `run-operation --args`, hook calls.

They arrive as whatever YAML or the command line made of them (a bool, a number, a string), so each
is read strictly: a value that means nothing fails naming the argument, rather than silently
meaning "off" or "all".
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lancens.text.yes_no import yes_or_no


def flag(value: Any, name: str) -> bool:
    """A yes/no argument; None (a var given without a value) is no."""
    parsed = False if value is None else yes_or_no(value)
    if parsed is not None:
        return parsed
    raise DbtRuntimeError(f"{name} must be true or false, got {value!r}")


def whole_number_or_none(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not str(value).strip().isdigit():
        raise DbtRuntimeError(f"{name} must be a whole number, got {value!r}")
    return int(value)


def days_or_none(value: Any, name: str) -> timedelta | None:
    if value is None:
        return None
    try:
        return timedelta(days=float(value))
    except (TypeError, ValueError) as exc:
        raise DbtRuntimeError(f"{name} must be a number of days, got {value!r}") from exc

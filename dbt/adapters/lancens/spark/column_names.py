"""Spark's rule for column names, written once.

Spark SQL resolves a column name in any case (``spark.sql.caseSensitive`` is false by default), so
a model may select ``Amount`` into a table whose column is ``amount``, and a config may name
``Event_TS`` for ``event_ts``. Arrow and Lance match names only as spelled. Every lookup of a name a
user or a query wrote (a config, a contract, a DDL statement, a model's result) in a schema goes
through :class:`ColumnMap`, which matches as Spark does and answers with the schema's spelling.

In a map of a schema's names an exact spelling wins over a match in another case, so a Lance table
holding both ``a`` and ``A`` (which Lance allows and Spark cannot tell apart) finds each by its exact
name. A map of names a user wrote, asked with a schema's names, matches every column spelled like
one of them in any case: ``a`` there matches both ``a`` and ``A`` (Spark would call it ambiguous).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TypeVar

V = TypeVar("V")


def fold(name: str) -> str:
    """The key two names share when Spark treats them as one column."""
    return name.lower()


class ColumnMap(Mapping[str, V]):
    """A mapping from column names, looked up as Spark resolves names.

    Iteration yields the names as first given; for names that differ only in case, the first one
    given is the one a lookup in another case finds.
    """

    def __init__(self, items: Iterable[tuple[str, V]]) -> None:
        self._exact: dict[str, V] = {}
        self._folded: dict[str, str] = {}
        for name, value in items:
            if name not in self._exact:
                self._exact[name] = value
                self._folded.setdefault(fold(name), name)

    def __getitem__(self, name: str) -> V:
        if name in self._exact:
            return self._exact[name]
        return self._exact[self._folded[fold(name)]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._exact)

    def __len__(self) -> int:
        return len(self._exact)

    def __repr__(self) -> str:
        return f"ColumnMap({self._exact!r})"


def column_names(names: Iterable[str]) -> ColumnMap[str]:
    """``names`` as a set matched the Spark way: ``x in it``; ``it.get(x)`` is x as ``names`` spells it."""
    return ColumnMap((name, name) for name in names)

"""Errors of the namespace engine, one class per error code of the Lance Namespace spec.

Callers (the dbt adapter, the Spark commit hook) branch on ``.code`` rather than on message text,
so each class fixes its code; messages always name the object concerned.
"""

from __future__ import annotations

import re

# Where in Lance's Rust source an error was raised (`, /home/.../commit.rs:502:24`), which Lance
# appends to its messages: noise for whoever reads the error, and it changes with every build.
_RUST_LOCATION = re.compile(r",?\s*\S+\.rs:\d+:\d+")


def without_source_locations(text: str) -> str:
    """`text` (a Lance error's) without the Rust source locations Lance appends to it."""
    return _RUST_LOCATION.sub("", text)


class NamespaceError(Exception):
    """Base class: every error the engine raises on purpose carries a spec error ``code``.

    Many messages quote the Lance error that caused them; Lance's Rust source locations are
    dropped here, once for all of them."""

    code: int = 18

    def __init__(self, message: str) -> None:
        message = without_source_locations(message)
        super().__init__(message)
        self.message = message


class UnsupportedOperationError(NamespaceError):
    """The operation is not supported in the configured mode (e.g. child namespaces in V1)."""

    code = 0


class NamespaceNotFoundError(NamespaceError):
    code = 1


class NamespaceAlreadyExistsError(NamespaceError):
    code = 2


class NamespaceNotEmptyError(NamespaceError):
    code = 3


class TableNotFoundError(NamespaceError):
    code = 4


class TableAlreadyExistsError(NamespaceError):
    code = 5


class TableVersionNotFoundError(NamespaceError):
    code = 11


class TableVersionAlreadyExistsError(NamespaceError):
    code = 12


class InvalidInputError(NamespaceError):
    code = 13


class ConcurrentModificationError(NamespaceError):
    code = 14


class PermissionDeniedError(NamespaceError):
    code = 15


class InternalError(NamespaceError):
    code = 18


class TableBranchNotFoundError(NamespaceError):
    """No such branch of the table (lance_namespace's TABLE_BRANCH_NOT_FOUND, as native raises it)."""

    code = 22


class TableBranchAlreadyExistsError(NamespaceError):
    """The table already has a branch of that name (TABLE_BRANCH_ALREADY_EXISTS, as native)."""

    code = 23


class DuplicateObjectIdError(Exception):
    """A manifest insert hit object ids that already exist (or that a concurrent writer inserted).

    Not a spec error: the caller knows whether the ids are namespaces, tables or table versions and
    maps this to code 2, 5 or 12.
    """

    def __init__(self, object_ids: list[str], concurrent: bool = False) -> None:
        super().__init__(f"object ids already exist in __manifest: {', '.join(object_ids)}")
        self.object_ids = object_ids
        self.concurrent = concurrent

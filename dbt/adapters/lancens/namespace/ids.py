"""Identifier rules: validation, ``$``-joined object ids and listing pagination.

The spec joins identifier levels with ``$`` into the manifest ``object_id``, so a level containing
``$`` would be ambiguous; path separators would escape the root on disk; ``__manifest`` is the
manifest table's own directory. All of these are InvalidInput (13); native accepts them silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dbt.adapters.lancens.namespace import errors

DELIMITER = "$"
MANIFEST_NAME = "__manifest"
_FORBIDDEN = ("$", "/", "\\")


def validate(identifier: Sequence[str] | None, *, what: str, allow_root: bool) -> list[str]:
    """Return ``identifier`` as a list after checking every level, or raise InvalidInput (13)."""
    if identifier is None or isinstance(identifier, str | bytes):
        raise errors.InvalidInputError(f"{what} identifier must be a list of strings, got {identifier!r}")
    parts = list(identifier)
    if not parts and not allow_root:
        raise errors.InvalidInputError(f"{what} identifier must not be empty (the root namespace)")
    for part in parts:
        if not isinstance(part, str) or not part:
            raise errors.InvalidInputError(f"{what} identifier {parts!r} has an empty or non-string level")
        if any(ch in part for ch in _FORBIDDEN):
            raise errors.InvalidInputError(
                f"{what} identifier {parts!r}: level {part!r} contains one of {' '.join(_FORBIDDEN)}"
            )
        if part == MANIFEST_NAME:
            raise errors.InvalidInputError(f"{what} identifier {parts!r}: {MANIFEST_NAME!r} is reserved")
    return parts


def object_id(identifier: Sequence[str]) -> str:
    return DELIMITER.join(identifier)


def split(object_id_: str) -> list[str]:
    return object_id_.split(DELIMITER) if object_id_ else []


def display(identifier: Sequence[str]) -> str:
    """How identifiers appear in error messages: dotted, root shown as ``<root>``."""
    return ".".join(identifier) if identifier else "<root>"


def paginate(names: Iterable[str], page_token: str | None, limit: int | None) -> tuple[list[str], str | None]:
    """Sort bytewise, start strictly after ``page_token``, cut at ``limit`` (native's convention)."""
    if limit is not None and limit < 0:
        raise errors.InvalidInputError(f"limit must be >= 0, got {limit}")
    ordered = sorted(set(names), key=lambda n: n.encode())
    if page_token is not None:
        ordered = [n for n in ordered if n.encode() > page_token.encode()]
    if limit is None or len(ordered) <= limit:
        return ordered, None
    page = ordered[:limit]
    return page, (page[-1] if page else None)

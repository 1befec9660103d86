"""Identifier rules: validation, ``$``-joined object ids and listing pagination.

The spec joins identifier levels with ``$`` into the manifest ``object_id``, so a level containing
``$`` would be ambiguous; path separators would escape the root on disk; ``__manifest`` is the
manifest table's own directory. All of these are InvalidInput (13); native accepts them silently.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

from dbt.adapters.lancens.namespace import errors

DELIMITER = "$"
MANIFEST_NAME = "__manifest"
_FORBIDDEN = ("$", "/", "\\")
MAX_OBJECT_ID_BYTES = 255 - len("01234567_")
"""A table directory is ``<8 hex>_<object id>`` (one path component, at most 255 bytes on every
store we run on); a table named by a longer id could not be created, so such ids are refused."""
MAX_VERSION = 2**63 - 1


def validate(
    identifier: Sequence[str] | None, *, what: str, allow_root: bool, argument: str = "id"
) -> list[str]:
    """Return ``identifier`` as a list after checking every level, or raise InvalidInput (13) with
    a message naming ``argument`` (the parameter of the public method) and what is wrong."""
    prefix = f"{argument}: {what} identifier"
    if identifier is None or isinstance(identifier, str | bytes) or not isinstance(identifier, Sequence):
        raise errors.InvalidInputError(f"{prefix} must be a list of strings, got {identifier!r}")
    parts = list(identifier)
    if not parts and not allow_root:
        raise errors.InvalidInputError(f"{prefix} must not be empty (the root namespace)")
    for index, part in enumerate(parts):
        if not isinstance(part, str):
            raise errors.InvalidInputError(
                f"{prefix} {parts!r}: level {index} is a {type(part).__name__}, not a string"
            )
        if not part:
            raise errors.InvalidInputError(f"{prefix} {parts!r}: level {index} is empty")
        if any(ch in part for ch in _FORBIDDEN):
            raise errors.InvalidInputError(
                f"{prefix} {parts!r}: level {part!r} contains one of {' '.join(_FORBIDDEN)}"
            )
        if any(ch < " " or ch == "\x7f" for ch in part):
            raise errors.InvalidInputError(f"{prefix} {parts!r}: level {part!r} contains a control character")
        if part == MANIFEST_NAME:
            raise errors.InvalidInputError(f"{prefix} {parts!r}: {MANIFEST_NAME!r} is reserved")
    size = len(object_id(parts).encode())
    if size > MAX_OBJECT_ID_BYTES:
        raise errors.InvalidInputError(
            f"{prefix} {ids_preview(parts)} is {size} bytes joined with {DELIMITER!r}; at most "
            f"{MAX_OBJECT_ID_BYTES} fit in a table directory name (<8 hex>_<object id>, 255 bytes)"
        )
    return parts


def ids_preview(parts: Sequence[str]) -> str:
    """A long identifier shortened for an error message."""
    text = repr(list(parts))
    return text if len(text) <= 80 else text[:77] + "..."


def validate_version(value: object, argument: str = "version") -> int:
    """A table version number: an int in [0, 2^63-1] (Lance's signed 64-bit range), else 13."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise errors.InvalidInputError(f"{argument} must be an integer, got {value!r}")
    if not 0 <= value <= MAX_VERSION:
        raise errors.InvalidInputError(f"{argument} must be between 0 and 2^63-1, got {value}")
    return value


def object_id(identifier: Sequence[str]) -> str:
    return DELIMITER.join(identifier)


def split(object_id_: str) -> list[str]:
    return object_id_.split(DELIMITER) if object_id_ else []


def with_ancestors(object_id_: str) -> list[str]:
    """``a$b$t`` -> ``["a", "a$b", "a$b$t"]``: the object and the namespaces it lives in."""
    parts = split(object_id_)
    return [object_id(parts[: depth + 1]) for depth in range(len(parts))]


def display(identifier: Sequence[str]) -> str:
    """How identifiers appear in error messages: dotted, root shown as ``<root>``."""
    return ".".join(identifier) if identifier else "<root>"


def validate_page(page_token: object, limit: object) -> None:
    """InvalidInput (13) unless ``page_token`` is None or a string and ``limit`` None or an int >= 0."""
    if page_token is not None and not isinstance(page_token, str):
        raise errors.InvalidInputError(f"page_token must be a string or None, got {page_token!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
        raise errors.InvalidInputError(f"limit must be an integer or None, got {limit!r}")
    if limit is not None and limit < 0:
        raise errors.InvalidInputError(f"limit must be >= 0, got {limit}")


def sort_names(names: Iterable[str]) -> list[str]:
    """Unique names in native's listing order (bytewise)."""
    return sorted(set(names), key=str.encode)


def paginate(names: Sequence[str], page_token: str | None, limit: int | None) -> tuple[list[str], str | None]:
    """One page of ``names`` (sorted as ``sort_names`` does): strictly after ``page_token``, at most
    ``limit`` names; the token is the last name returned when more remain (native's convention).
    A bisection, so a page costs the same however long the listing is."""
    validate_page(page_token, limit)
    start = 0 if page_token is None else bisect.bisect_right(names, page_token.encode(), key=str.encode)
    if limit is None or len(names) - start <= limit:
        return list(names[start:]), None
    page = list(names[start : start + limit])
    return page, (page[-1] if page else None)

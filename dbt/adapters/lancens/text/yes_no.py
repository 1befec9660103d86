"""The one reading of a yes/no value, for engine properties, data source options and macro
arguments alike."""

from __future__ import annotations

_YES = frozenset({"true", "1", "yes", "y", "on"})
_NO = frozenset({"false", "0", "no", "n", "off"})


def yes_or_no(value: object) -> bool | None:
    """A bool as it is; a spelling of yes or no (``true/1/yes/y/on``, ``false/0/no/n/off``, any
    case, spaces around ignored) as that; anything else None, for the caller to refuse in its own
    words."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    return True if text in _YES else False if text in _NO else None

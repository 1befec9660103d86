"""JSON encoding of the manifest ``metadata`` column (namespace/table properties, view bodies).

Compact JSON with raw non-ASCII, as native writes; NULL for no properties so native reads ``None``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dbt.adapters.lancens.namespace import errors


def dumps(properties: Mapping[str, Any] | None) -> str | None:
    if not properties:
        return None
    return json.dumps(dict(properties), separators=(",", ":"), ensure_ascii=False)


def loads(text: str | None) -> dict[str, Any]:
    return dict(json.loads(text)) if text else {}


def string_dict(properties: Mapping[str, object] | None, argument: str = "properties") -> dict[str, str]:
    """Properties as strings (the spec's property maps are string to string); 13 naming
    ``argument`` unless ``properties`` is a mapping (or None) with string keys."""
    if properties is None:
        return {}
    if not isinstance(properties, Mapping):
        raise errors.InvalidInputError(f"{argument} must be a mapping of strings, got {properties!r}")
    bad = [key for key in properties if not isinstance(key, str)]
    if bad:
        raise errors.InvalidInputError(f"{argument}: keys must be strings, got {bad!r}")
    return {key: str(value) for key, value in properties.items()}

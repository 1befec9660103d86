"""JSON encoding of the manifest ``metadata`` column (namespace/table properties, view bodies).

Compact JSON with raw non-ASCII, as native writes; NULL for no properties so native reads ``None``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def dumps(properties: Mapping[str, Any] | None) -> str | None:
    if not properties:
        return None
    return json.dumps(dict(properties), separators=(",", ":"), ensure_ascii=False)


def loads(text: str | None) -> dict[str, Any]:
    return dict(json.loads(text)) if text else {}


def string_dict(properties: Mapping[str, object] | None) -> dict[str, str]:
    """Properties as strings: the spec's property maps are string to string."""
    return {str(key): str(value) for key, value in (properties or {}).items()}

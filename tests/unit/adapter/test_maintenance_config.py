"""The `lance_maintenance` model config: defaults, and a bad key or value named."""

from __future__ import annotations

import pytest

from dbt.adapters.lancens.definitions.maintenance_config import (
    MaintenanceConfig,
    MaintenanceConfigError,
    parse_maintenance,
)


def test_absent_config_means_no_maintenance_and_defaults_are_documented() -> None:
    assert parse_maintenance(None) is None
    assert parse_maintenance({}) == MaintenanceConfig(None, None, None)
    assert parse_maintenance({"retain_versions": 5, "older_than_days": 0}) == MaintenanceConfig(None, 5, 0.0)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"retain": 3}, "unknown key `retain`; allowed keys: older_than_days, optimize_over_fragments"),
        ({"retain_versions": 0}, "`retain_versions` must be a positive integer, got 0"),
        ({"optimize_over_fragments": True}, "`optimize_over_fragments` must be a positive integer"),
        ({"older_than_days": -1}, "`older_than_days` must be a number >= 0, got -1"),
        (["retain_versions"], "must be a mapping"),
    ],
)
def test_bad_config_is_named(raw: object, message: str) -> None:
    with pytest.raises(MaintenanceConfigError, match=message.replace("(", "\\(")):
        parse_maintenance(raw)

"""The upstream model of the microbatch tests: events spread hour by hour over whole days."""

from __future__ import annotations


def events_model(days: int, rows: int) -> str:
    """A table model of `rows` events (ids 1..rows) from 2024-01-01, one hour apart, wrapping after
    `days` days, with `event_time` set so dbt filters it per batch."""
    return f"""
{{{{ config(materialized='table', event_time='event_ts') }}}}
select id,
       timestamp'2024-01-01 00:00:00'
         + make_interval(0, 0, 0, 0, cast(id % {days * 24} as int), 0, 0) as event_ts
from range(1, {rows + 1})
"""


def window(days: int) -> list[str]:
    """dbt's arguments selecting the batches of those `days` days."""
    return ["--event-time-start", "2024-01-01", "--event-time-end", f"2024-01-{days + 1:02d}"]

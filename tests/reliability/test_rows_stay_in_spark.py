"""No incremental strategy and no snapshot brings the model's rows to the driver (issue #48).

A real `dbt build` runs in a process whose Spark driver accepts at most 1 MiB of task results per
job (`spark.driver.maxResultSize`, set in the profile's `spark_config`): a `collect()` or
`toArrow()` of a model's rows (several MiB here) makes Spark abort the job. The fragment metadata,
per-fragment deletion results and the one-row checks the adapter does bring back stay far below.
Broadcast joins are off (`spark.sql.autoBroadcastJoinThreshold: -1`): Spark sends a broadcast's
small side through the driver by design, bounded by that threshold (10 MiB by default) however
large the result, so with them on a 1 MiB limit would also catch Spark's own bounded path.
The first build creates every table; the second applies merge (with an excluded column kept from
the stored rows), delete+insert, insert_overwrite with and without `partition_by`, microbatch
batches and the changes of a `check` and a `timestamp` snapshot, each of 20,000 updated and 20,000
new rows of 100-byte pads, and the tables hold exactly what dbt's SQL would. (A microbatch window's
stored rows are found and deleted by Spark tasks too; tests/reliability/test_kill_microbatch.py
shows which process writes its deletion file.)
"""

from __future__ import annotations

import json
from pathlib import Path

import lance
import pyarrow as pa

from tests.reliability.helpers import Project, check_namespace, make_project

ROWS = 40_000
RESULT_LIMIT = "1m"  # Spark's smallest unit; each model's result is several MiB
_RANGE = "from range({{ var('lo') }}, {{ var('hi') }})"
_ROWS = "select id, {{ var('round') }} as round, repeat('x', 100) as pad " + _RANGE
MODELS = {
    "merged": "{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id',"
    " merge_exclude_columns=['first_round']) }}\n"
    "select id, {{ var('round') }} as round, {{ var('round') }} as first_round, repeat('x', 100) as pad "
    "from range({{ var('lo') }}, {{ var('hi') }})",
    "deleted_inserted": "{{ config(materialized='incremental', incremental_strategy='delete+insert',"
    " unique_key='id') }}\n" + _ROWS,
    "overwritten": "{{ config(materialized='incremental', incremental_strategy='insert_overwrite') }}\n"
    + _ROWS,
    "partitions": "{{ config(materialized='incremental', incremental_strategy='insert_overwrite',"
    " partition_by=['part']) }}\n"
    "select id, {{ var('round') }} as round, repeat('x', 100) as pad, id % 4 as part "
    "from range({{ var('lo') }}, {{ var('hi') }}) where id % 4 < {{ var('parts') }}",
    "events": "{{ config(materialized='table', event_time='event_ts') }}\n"
    "select id, {{ var('round') }} as round, repeat('x', 100) as pad,"
    " timestamp'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, cast(id % 48 as int), 0, 0) as event_ts "
    "from range({{ var('lo') }}, {{ var('hi') }})",
    "batched": "{{ config(materialized='incremental', incremental_strategy='microbatch',"
    " event_time='event_ts', batch_size='day', begin='2024-01-01') }}\n"
    "select id, round, pad, event_ts from {{ ref('events') }}",
}
SNAPSHOT = """
{% snapshot items_snapshot %}
{{ config(unique_key='id', strategy='check', check_cols=['payload']) }}
select id, concat('r{{ var("round") }}', repeat('x', 100)) as payload
from range({{ var('lo') }}, {{ var('hi') }})
{% endsnapshot %}
"""
TIMESTAMP_SNAPSHOT = """
{% snapshot stamped_snapshot %}
{{ config(unique_key='id', strategy='timestamp', updated_at='updated_at') }}
select id, concat('r{{ var("round") }}', repeat('x', 100)) as payload,
  timestamp'2024-01-01 00:00:00' + make_interval(0, 0, 0, {{ var('round') }}, 0, 0, 0) as updated_at
from range({{ var('lo') }}, {{ var('hi') }})
{% endsnapshot %}
"""
WINDOW = ["--event-time-start", "2024-01-01", "--event-time-end", "2024-01-03"]
FIRST = {"round": 1, "lo": 0, "hi": ROWS, "parts": 4}
SECOND = {"round": 2, "lo": ROWS // 2, "hi": ROWS + ROWS // 2, "parts": 2}


def _rows(project: Project, name: str) -> pa.Table:
    info = project.namespace().describe_table(["analytics", name])
    return lance.dataset(info.location, version=info.version).to_table()


def _by_id(table: pa.Table, column: str) -> dict[int, object]:
    ids = table.column("id").to_pylist()
    assert len(ids) == len(set(ids)), "an id is stored twice"
    return dict(zip(ids, table.column(column).to_pylist(), strict=True))


def test_no_strategy_and_no_snapshot_collects_the_models_rows(tmp_path: Path) -> None:
    project = make_project(
        tmp_path / "proj",
        str(tmp_path / "root"),
        sample=False,
        extra={
            "spark_config": {
                "spark.driver.maxResultSize": RESULT_LIMIT,
                "spark.sql.autoBroadcastJoinThreshold": "-1",
            }
        },
    )
    for name, sql in MODELS.items():
        project.write(f"models/{name}.sql", sql)
    project.write("snapshots/items_snapshot.sql", SNAPSHOT)
    project.write("snapshots/stamped_snapshot.sql", TIMESTAMP_SNAPSHOT)
    for variables in (FIRST, SECOND):
        run = project.run("build", "--vars", json.dumps(variables), *WINDOW, timeout=900)
        assert run.returncode == 0, run.output[-4000:]
    check_namespace(project.namespace())

    half, whole, end = ROWS // 2, ROWS, ROWS + ROWS // 2
    merged = _rows(project, "merged")
    assert _by_id(merged, "round") == {i: 1 if i < half else 2 for i in range(end)}
    assert _by_id(merged, "first_round") == {i: 1 if i < whole else 2 for i in range(end)}  # kept
    deleted_inserted = _rows(project, "deleted_inserted")
    assert _by_id(deleted_inserted, "round") == {i: 1 if i < half else 2 for i in range(end)}
    assert _by_id(_rows(project, "overwritten"), "round") == {i: 2 for i in range(half, end)}
    replaced = {i: 2 for i in range(half, end) if i % 4 < 2}
    assert _by_id(_rows(project, "partitions"), "round") == {
        **{i: 1 for i in range(whole) if i % 4 >= 2},
        **replaced,
    }
    assert _by_id(_rows(project, "batched"), "round") == {i: 2 for i in range(half, end)}

    for name in ("items_snapshot", "stamped_snapshot"):  # the check and the timestamp strategy
        snapshot = _rows(project, name).select(["id", "payload", "dbt_valid_to"]).to_pylist()
        current = {row["id"]: row["payload"][:2] for row in snapshot if row["dbt_valid_to"] is None}
        closed = sorted(row["id"] for row in snapshot if row["dbt_valid_to"] is not None)
        assert current == {i: "r1" if i < half else "r2" for i in range(end)}, name
        assert closed == list(range(half, whole)), name

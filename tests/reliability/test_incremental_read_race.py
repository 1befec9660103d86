"""An incremental run that reads its own table must not plan on a version another writer replaced.

The models append the ids above `max(id)` of `{{ this }}`. While the SQL model's query runs (a
Spark task creates a marker directory and waits at a gate file), another process (this test, through
the engine) restores the table to an older version, then opens the gate; the Python model's table
is restored right after the model read it. Lance would let the run's Append land on the restored
version, since an Append does not conflict with what came before it: the rows between the two
versions were lost, and the run reported success. The run is refused instead (14, "changed ... while
the model's query read it"), nothing of it is committed, and the next run appends from the restored version.
"""

from __future__ import annotations

import glob
import json
from pathlib import Path

import lance

from tests.reliability.helpers import DbtSession, make_project, wait_for

HANG_MACRO = """
{#-- true for every row; with var hang=yes the row matching `condition` creates a directory
     `<markers>/<name>-<uuid>` in its Spark task, then waits there until the file `<gate>` exists
     (polled every 50 ms, at most 1200 times: 60 s), so the query is held exactly as long as the
     racing writer needs, not a fixed sleep. `try_reflect` of Spark's getPropertiesFromFile is
     null while the file is missing; `exists` stops at the first true. --#}
{% macro pause_on(condition, name) -%}
  {%- if var('hang', 'no') == 'yes' -%}
  (case when {{ condition }} then length(concat(
      java_method('org.apache.spark.util.Utils', 'createDirectory', '{{ var("markers") }}', '{{ name }}'),
      cast(exists(sequence(1, 1200), i ->
          try_reflect('org.apache.spark.util.Utils', 'getPropertiesFromFile', '{{ var("gate") }}') is not null
          or length(java_method('java.lang.Thread', 'sleep', cast(50 as bigint))) < 0) as string)))
   else 0 end) >= 0
  {%- else -%}
  true
  {%- endif -%}
{%- endmacro %}
"""
APPEND_ABOVE_MAX = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select id from range({{ var('hi') }})
where {{ pause_on('id = 0', 'append') }}
{% if is_incremental() %} and id > (select max(id) from {{ this }}) {% endif %}
"""
TABLE = ["analytics", "grows"]
PYTHON_APPEND_ABOVE_MAX = """
def model(dbt, session):
    dbt.config(materialized="incremental")
    df = session.range(int(dbt.config.get("hi")))
    if dbt.is_incremental:
        # dbt's documented pattern: the model reads its own table, eagerly
        top = session.sql(f"select max(id) from {dbt.this}").collect()[0][0]
        if dbt.config.get("race") == "yes":
            # another writer restores the table right after that read
            from dbt.adapters.lancens.namespace import DirectoryNamespace

            DirectoryNamespace(dbt.config.get("root")).restore_table(["analytics", "py_grows"], 1)
        df = df.filter(df.id > top)
    return df
"""
PYTHON_CONFIG = """
version: 2
models:
  - name: py_grows
    config:
      hi: "{{ var('hi') }}"
      race: "{{ var('race', 'no') }}"
      root: "{{ var('root') }}"
"""


def _ids(project, name: str) -> list[int]:
    info = project.namespace().describe_table(["analytics", name])
    return sorted(lance.dataset(info.location).to_table().column("id").to_pylist())


def test_a_restore_while_the_query_reads_this_refuses_the_run(tmp_path: Path, setup_dbt: DbtSession) -> None:
    """Two models in one run: a SQL model whose query another process races (a restore while its
    Spark task runs), and a Python model that reads `this` eagerly and whose table is restored right
    after that read (from inside the model, standing in for another writer)."""
    root = str(tmp_path / "root")
    project = make_project(tmp_path / "proj", root, sample=False)
    project.write("macros/pause_on.sql", HANG_MACRO)
    project.write("models/grows.sql", APPEND_ABOVE_MAX)
    project.write("models/py_grows.py", PYTHON_APPEND_ABOVE_MAX)
    project.write("models/py_grows.yml", PYTHON_CONFIG)
    # version 1: ids 0..9; version 2: 0..14 (the worker's setup process, which never comes back here)
    setup_dbt.succeed(
        [[str(project.path), "run", "--vars", json.dumps({"hi": hi, "root": root})] for hi in (10, 15)]
    )
    for name in ("grows", "py_grows"):
        assert _ids(project, name) == list(range(15))

    markers, gate = tmp_path / "markers", tmp_path / "gate"
    markers.mkdir()
    racing = project.start(
        "run", "--threads", "1",
        "--vars", json.dumps(
            {"hi": 20, "hang": "yes", "markers": str(markers), "gate": str(gate), "root": root, "race": "yes"}
        ),
    )  # fmt: skip
    wait_for(lambda: glob.glob(f"{markers}/append-*"), "the SQL model's query running", process=racing)
    project.namespace().restore_table(TABLE, 1)  # another writer, while the query reads version 2
    gate.touch()  # the restore is committed: the query may finish
    assert racing.wait(timeout=300) != 0
    output = (project.path / "dbt.out").read_text()
    refused = "changed from version 2 to 3 while the model's query read it"
    assert output.count(refused) >= 2, output[-4000:]  # both models, each naming its own race
    for name in ("grows", "py_grows"):  # the restores stand; ids 15..19 were not appended to them
        assert _ids(project, name) == list(range(10)), name

    again = project.run("run", "--vars", json.dumps({"hi": 20, "root": root}))
    assert again.returncode == 0, again.output[-3000:]
    for name in ("grows", "py_grows"):
        assert _ids(project, name) == list(range(20)), name

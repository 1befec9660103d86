"""Models that read one namespace view, run on several threads of a fresh `dbt run` process.

A fresh process registers a namespace view in Spark's catalog on its first use. dbt's threads used
to do it at the same time: each saw the view missing, each ran `CREATE OR REPLACE VIEW`, and Spark's
check-then-create let one win while the others failed with TABLE_OR_VIEW_ALREADY_EXISTS. The
models only read the view, so every one of them must succeed, as with `threads: 1`.
"""

from __future__ import annotations

from pathlib import Path

import lance

from tests.reliability.helpers import DbtSession, make_project

READERS = [f"reader{i}" for i in range(1, 5)]


def test_parallel_models_reading_one_view_all_succeed(tmp_path: Path, setup_dbt: DbtSession) -> None:
    project = make_project(tmp_path / "p", str(tmp_path / "root"), sample=False, threads=4)
    project.write("models/shared_view.sql", "{{ config(materialized='view') }} select id from range(10)")
    for name in READERS:
        project.write(f"models/{name}.sql", "select count(*) as n from {{ ref('shared_view') }}")
    # the view is made by the worker's setup process: the runs below are fresh processes
    (first,) = setup_dbt.succeed([[str(project.path), "run", "--select", "shared_view"]])
    assert first["nodes"]["shared_view"]["status"] == "success", first

    for _ in range(2):  # each a fresh process, whose catalog does not know the view yet
        run = project.run("run", "--select", *READERS)
        assert {name: run.results[name]["status"] for name in READERS} == dict.fromkeys(READERS, "success"), (
            run.output[-3000:]
        )
    ns = project.namespace()
    for name in READERS:
        table = lance.dataset(ns.describe_table(["analytics", name]).location).to_table()
        assert table.to_pylist() == [{"n": 10}]

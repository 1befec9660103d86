"""Two `dbt run` processes writing the same tables at once: each reports the version it committed.

Both projects build `shared1` ... `shared6` (the same tables of one root) after a barrier: a
Python model in each project waits until the other process has reached its own, so the two
processes' writes overlap (threads: 4 each). For every write a process reports as done
("OK (version N)"), version N of that table must be that process's commit: its Lance transaction
properties carry the process's dbt invocation id, and its rows are the ones that process wrote.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import lance

from dbt.adapters.lancens.namespace import all_pages
from tests.reliability.helpers import check_namespace, make_project

SHARED = [f"shared{i}" for i in range(1, 7)]
MODEL = "-- depends_on: {{{{ ref('gate_{side}') }}}}\nselect '{side}' as who, id from range({rows})"
GATE = """
import os
import time


def model(dbt, session):
    barrier = os.environ["LANCENS_TEST_BARRIER"]
    open(os.path.join(barrier, "{side}"), "w").close()
    deadline = time.monotonic() + 600
    while not os.path.exists(os.path.join(barrier, "{other}")):
        assert time.monotonic() < deadline, "the other dbt process never reached the barrier"
        time.sleep(0.05)
    return session.range(1)
"""
REPORTED = re.compile(r"\(version (\d+)\)")
CONFLICT_WORDS = ("concurrent", "conflict", "retry", "already exists")


def _invocation_id(project_path: Path) -> str:
    return json.loads((project_path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]


def test_each_run_reports_its_own_version(tmp_path: Path) -> None:
    root = str(tmp_path / "root")
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    projects = {}
    for side, other, rows in (("a", "b", 11), ("b", "a", 13)):
        project = make_project(tmp_path / side, root, sample=False, threads=4)
        project.write(f"models/gate_{side}.py", GATE.format(side=side, other=other))
        for name in SHARED:
            project.write(f"models/{name}.sql", MODEL.format(side=side, rows=rows))
        projects[side] = project

    env = {"LANCENS_TEST_BARRIER": str(barrier)}
    processes = {side: project.start("run", env=env) for side, project in projects.items()}
    for process in processes.values():
        process.wait(timeout=900)

    ns = projects["a"].namespace()
    check_namespace(ns)
    reported: dict[str, set[int]] = {name: set() for name in SHARED}
    for side, project in projects.items():
        log = (project.path / "dbt.out").read_text()
        results = project.results()
        invocation = _invocation_id(project.path)
        for name in SHARED:
            result = results[name]
            if result["status"] != "success":
                assert any(word in result["message"].lower() for word in CONFLICT_WORDS), (
                    result,
                    log[-3000:],
                )
                continue
            match = REPORTED.search(result["message"])
            assert match, result
            version = int(match.group(1))
            table = ["analytics", name]
            versions = {v.version: v.metadata for v in all_pages(ns.list_table_versions, table)}
            assert versions[version].get("dbt_invocation_id") == invocation, (side, name, version, versions)
            dataset = lance.dataset(ns.describe_table(table).location, version=version)
            assert set(dataset.to_table().column("who").to_pylist()) == {side}, (side, name, version)
            assert version not in reported[name], f"{name}: both processes reported version {version}"
            reported[name].add(version)
    assert all(reported.values()), reported

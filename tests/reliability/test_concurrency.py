"""Two `dbt build` processes on one root at the same time, each with `threads: 4`.

Each project has three models of its own and one model (`shared`) that both build. Both processes
also create the same namespace at start-up. Guarantees checked: every model a process reports as
built is in the namespace with exactly its rows (no lost update), no `__manifest` row is doubled,
and a process that loses a race on `shared` fails that node with an error naming the conflict.
"""

from __future__ import annotations

from pathlib import Path

import lance

from tests.reliability.helpers import check_namespace, make_project, manifest_object_ids

MODEL = "select '{who}' as who, id from range({rows})"
CONFLICT_WORDS = ("concurrent", "already exists", "conflict", "retry")


def test_two_processes_on_one_root(tmp_path: Path) -> None:
    root = str(tmp_path / "root")
    projects = {}
    for side in ("a", "b"):
        project = make_project(tmp_path / side, root, sample=False, threads=4)
        for i in range(1, 4):
            project.write(f"models/{side}{i}.sql", MODEL.format(who=f"{side}{i}", rows=10 * i))
        project.write("models/shared.sql", MODEL.format(who="shared", rows=7))
        projects[side] = project

    processes = {side: project.start("build") for side, project in projects.items()}
    codes = {side: process.wait(timeout=600) for side, process in processes.items()}
    results = {side: project.results() for side, project in projects.items()}
    logs = {side: (project.path / "dbt.out").read_text() for side, project in projects.items()}

    ns = projects["a"].namespace()
    counts = check_namespace(ns)
    for side in ("a", "b"):
        for i in range(1, 4):
            name = f"{side}{i}"
            assert results[side][name]["status"] == "success", (name, logs[side][-3000:])
            assert counts[("analytics", name)] == 10 * i
            rows = lance.dataset(ns.describe_table(["analytics", name]).location).to_table()
            assert set(rows.column("who").to_pylist()) == {name}

    shared = [results[side]["shared"] for side in ("a", "b")]
    assert any(r["status"] == "success" for r in shared), shared
    for side, result in zip(("a", "b"), shared, strict=True):
        if result["status"] != "success":
            assert codes[side] != 0
            assert any(word in result["message"].lower() for word in CONFLICT_WORDS), result
    assert counts[("analytics", "shared")] == 7
    info = ns.describe_table(["analytics", "shared"])
    winners = sum(r["status"] == "success" for r in shared)
    assert info.version >= winners
    assert manifest_object_ids(ns).count("analytics$shared") == 1
    assert manifest_object_ids(ns).count("analytics") == 1

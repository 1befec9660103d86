"""A promotion killed with SIGKILL at each step of its commits leaves main before or after the whole
promotion, never between: a real `dbt run-operation lancens.promote_branch` process paused at a
step of the engine's commit protocol (`LANCENS_PAUSE_AT_STEP`) and killed there, then the namespace
read by a fresh engine and pylance.

The promotion makes two kinds of commits on main: first, per table whose branch wrote files, a
version registering the branch's directory as a base path (rows unchanged), then ONE `__manifest`
commit of every table's new version. A pause stops at the first commit that reaches the step, so
the test promotes again after each kill until the promotion has landed: every kill point is met.
Table `c` is new on the branch (main has none), and so is schema `analytics.extra` with table `d`:
they appear on main with the others, or not at all.
"""

from __future__ import annotations

from pathlib import Path

import lance
import pytest
import yaml

from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.reliability.helpers import check_namespace, kill_group, make_project, wait_for

TABLES = ("a", "b")
MODEL = "{{{{ config(materialized='table') }}}} select {{{{ var('gen', 1) }}}} * {factor} as gen"
IN_NEW_SCHEMA = "{{ config(materialized='table', schema='extra') }} select {{ var('gen', 1) }} * 4 as gen"
EXTRA = ["analytics", "extra"]


def main_rows(ns: DirectoryNamespace) -> dict[str, list[int] | bool | None]:
    """Every table's rows on main, as a fresh engine and pylance see them (None: main has no `c`,
    `d`), and whether main has schema `analytics.extra`."""
    found: dict[str, list[int] | bool | None] = {
        name: sorted(
            lance.dataset(ns.describe_table(["analytics", name]).location).to_table()["gen"].to_pylist()
        )
        for name in TABLES
    }
    found["c"] = (
        sorted(lance.dataset(ns.describe_table(["analytics", "c"]).location).to_table()["gen"].to_pylist())
        if ns.table_exists(["analytics", "c"])
        else None
    )
    found["extra"] = ns.namespace_exists(EXTRA)
    found["d"] = (
        sorted(lance.dataset(ns.describe_table([*EXTRA, "d"]).location).to_table()["gen"].to_pylist())
        if found["extra"] and ns.table_exists([*EXTRA, "d"])
        else None
    )
    return found


@pytest.mark.parametrize("step", ["staged", "row_inserted", "finalized"])
def test_killed_promotion_leaves_main_before_or_after(tmp_path: Path, step: str) -> None:
    project = make_project(
        tmp_path / "project",
        str(tmp_path / "root"),
        sample=False,
        threads=1,
        extra={"table_version_management": True},
    )
    for factor, name in enumerate(TABLES, start=1):
        project.write(f"models/{name}.sql", MODEL.format(factor=factor))
    profiles = yaml.safe_load((project.path / "profiles.yml").read_text())
    outputs = next(iter(profiles.values()))["outputs"]
    outputs["ci"] = {**outputs["t"], "branch": "ci_kill"}
    (project.path / "profiles.yml").write_text(yaml.safe_dump(profiles))

    built = project.run("run")
    assert built.returncode == 0, built.output
    project.write("models/c.sql", MODEL.format(factor=3))  # new: on the branch only
    project.write("models/d.sql", IN_NEW_SCHEMA)  # in a new schema: both on the branch only
    on_branch = project.run("run", "--target", "ci", "--vars", "{gen: 2}")
    assert on_branch.returncode == 0, on_branch.output
    ns = project.namespace()
    before = {"a": [1], "b": [2], "c": None, "extra": False, "d": None}
    after = {"a": [2], "b": [4], "c": [6], "extra": True, "d": [8]}
    assert main_rows(ns) == before

    markers = tmp_path / "markers"
    promote = ("run-operation", "lancens.promote_branch", "--args", "{branch: ci_kill}")
    for attempt in range(len(TABLES) + 2):
        markers.mkdir(exist_ok=True)
        for old in markers.iterdir():
            old.unlink()
        process = project.start(
            *promote, env={"LANCENS_PAUSE_AT_STEP": f"{step}:{markers}"}, log=f"p{attempt}.out"
        )
        try:
            wait_for(
                lambda p=process, m=markers / step: m.exists() or p.poll() is not None,
                f"pause at {step}",
                300,
            )
        finally:
            kill_group(process)
        fresh = DirectoryNamespace(project.root)
        check_namespace(fresh)
        state = main_rows(fresh)
        assert state in (before, after), f"kill {attempt} at {step}: main is between: {state}"
        if state == after:
            break
    else:  # each attempt paused before the promotion's commit point: the next one, unpaused, lands it
        done = project.run(*promote)
        assert done.returncode == 0, done.output
        assert main_rows(DirectoryNamespace(project.root)) == after

"""A dbt run that loses a race on a root says so in words, fails, and leaves nothing of its own.

Real `dbt` processes race on one root; the loser is held at a gate file (inside a Python model, or
inside the Spark task that writes a model's rows, after the write began) while the winner runs to
its end, then let go. The loser of each race is a process of its own; every winner is an
invocation in the module's one other dbt process (`DbtSession`), which also built the starting
roots. Checked: the loser exits non-zero with an error in the user's words ("another run published
...; nothing of this run was published: run it again"), never dbt's "Exited because of keyboard
interrupt", and with no Rust, Python or Java source location; the namespace holds the winner's work
and nothing of the loser's.

Also three messages that must name what is wrong, in that other process too: a root that cannot be
created, a `dbt clone` of a Python model never built in the state's target, and a source whose
schema (namespace) does not exist.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lance
import pytest
import yaml

from tests.reliability.helpers import DbtSession, Project, check_namespace, make_project, wait_for

HOOKS = {
    "on-run-start": ["{{ lancens_begin_atomic_publish() }}"],
    "on-run-end": ["{{ lancens_end_atomic_publish(results) }}"],
}
WHO = "{{ config(materialized='table') }} select '{{ var('who') }}' as who, id from range(3)"
# A Python model that waits at the gate before it returns its rows (everything upstream is staged).
GATE_IN_MODEL = """
import os
import time


def model(dbt, session):
    dbt.config(materialized="table")
    frame = dbt.ref("m1")
    open(os.path.join({gate!r}, "reached"), "w").close()
    while not os.path.exists(os.path.join({gate!r}, "open")):
        time.sleep(0.2)
    return frame
"""
# A Python model whose rows wait at the gate inside the Spark task that writes them: the write has
# begun (it knows the table's version, or that there is no table), nothing has landed.
GATE_IN_TASK = """
import os
import time

from pyspark.sql import functions as F


def wait(value):
    open(os.path.join({gate!r}, "reached"), "w").close()
    while not os.path.exists(os.path.join({gate!r}, "open")):
        time.sleep(0.2)
    return value


def model(dbt, session):
    dbt.config(materialized="table")
    held = F.udf(wait, "bigint")
    return session.range(3).select(F.lit("loser").alias("who"), held("id").alias("id"))
"""
# Where a message shows where in the code it was raised: Rust (Lance), Python, Java frames.
SOURCE_LOCATION = re.compile(r"\.rs:\d+|\.py\", line \d+|\bat org\.|\bat java\.")


def _project(directory: Path, root: str, atomic: bool) -> Project:
    extra = {"atomic_publish": True} if atomic else {}
    project = make_project(directory, root, sample=False, threads=1, schema="race", extra=extra)
    if atomic:
        config = yaml.safe_load((directory / "dbt_project.yml").read_text())
        project.write("dbt_project.yml", yaml.safe_dump({**config, **HOOKS}))
    return project


@pytest.fixture(scope="module")
def dbt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DbtSession]:
    """The module's one dbt process besides the losers: every winner runs in it (a JVM start each
    less), as do the builds of the starting roots and the error cases. A winner only has to commit
    first; what is checked is the loser's process."""
    with DbtSession(tmp_path_factory.mktemp("session")) as session:
        yield session


@pytest.fixture(scope="module")
def built_roots(tmp_path_factory: pytest.TempPathFactory, dbt: DbtSession) -> dict[str, Path]:
    """The roots the two races on a built root start from, m1 (and the atomic run's gate model) at
    version 1, built once by the module's session; each test races on a copy of its root (the
    namespace's locations are relative to the root, so a copy is the same root elsewhere)."""
    base = tmp_path_factory.mktemp("built")
    opened = base / "open_gate"
    opened.mkdir()
    (opened / "open").touch()
    atomic = _project(base / "atomic", str(base / "atomic_root"), True)
    atomic.write("models/m1.sql", WHO)
    atomic.write("models/gate.py", GATE_IN_MODEL.format(gate=str(opened)))
    plain = _project(base / "plain", str(base / "plain_root"), False)
    plain.write("models/m1.sql", WHO)
    dbt.succeed([[str(project.path), "run", "--vars", "{who: build}"] for project in (atomic, plain)])
    return {"atomic": base / "atomic_root", "plain": base / "plain_root"}


def _race(
    dbt: DbtSession,
    loser: Project,
    winner: Project,
    gate: Path,
    loser_args: list[str],
    winner_args: list[str],
) -> str:
    """Start the loser, hold it at the gate, run the winner to its end (in `dbt`), let the loser go;
    returns the loser's output (its exit code is asserted non-zero here)."""
    process = loser.start(*loser_args)
    try:
        wait_for(lambda: (gate / "reached").exists(), "the loser at its gate", timeout=900, process=process)
        dbt.succeed([[str(winner.path), *winner_args]])
        (gate / "open").touch()
        code = process.wait(timeout=900)
    finally:
        if process.poll() is None:
            process.kill()
    output = (loser.path / "dbt.out").read_text()
    assert code != 0, output[-4000:]
    return output


def _said_in_words(output: str, *words: str) -> None:
    for word in words:
        assert word in output, (word, output[-4000:])
    assert "keyboard interrupt" not in output.lower(), output[-4000:]
    assert not SOURCE_LOCATION.search(output), SOURCE_LOCATION.search(output)


def _rows(project: Project, table: str) -> tuple[int, list[str]]:
    info = project.namespace().describe_table(["race", table])
    return int(info.version or 0), lance.dataset(info.location).to_table().column("who").to_pylist()


def test_atomic_run_that_loses_the_publish_on_a_built_root(
    tmp_path: Path, built_roots: dict[str, Path], dbt: DbtSession
) -> None:
    """Both runs stage m1 on version 1; the winner publishes version 2 first, so the loser's publish
    is refused (12): its on-run-end hook fails with the reason and its nodes are errors."""
    root, gate = str(tmp_path / "root"), tmp_path / "gate"
    gate.mkdir()
    shutil.copytree(built_roots["atomic"], root)
    loser, winner = _project(tmp_path / "loser", root, True), _project(tmp_path / "winner", root, True)
    for project in (loser, winner):
        project.write("models/m1.sql", WHO)
        project.write("models/gate.py", GATE_IN_MODEL.format(gate=str(tmp_path / "unused")))
    loser.write("models/gate.py", GATE_IN_MODEL.format(gate=str(gate)))
    (tmp_path / "unused").mkdir()
    (tmp_path / "unused" / "open").touch()
    assert _rows(winner, "m1") == (1, ["build"] * 3)

    output = _race(
        dbt,
        loser,
        winner,
        gate,
        ["run", "--vars", "{who: loser}"],
        ["run", "--vars", "{who: winner}", "-s", "m1"],
    )
    _said_in_words(
        output,
        "another run published or changed some of this run's tables first",
        "nothing of this run was published",
    )
    assert "run it again" in output
    results = loser.results()
    assert results["m1"]["status"] == "error" and "not published" in results["m1"]["message"], results
    assert _rows(winner, "m1") == (2, ["winner"] * 3)
    assert _rows(winner, "gate")[0] == 1  # the loser's gate version was never published
    check_namespace(winner.namespace())


def test_atomic_run_that_loses_a_new_table_on_a_fresh_root(tmp_path: Path, dbt: DbtSession) -> None:
    """The loser's write of m1 begins on a root without m1; the winner publishes m1 meanwhile. The
    loser's m1 fails in words (not Lance's "detached commits cannot currently be used to create new
    datasets") and the run publishes nothing, which its m2's result says."""
    root, gate = str(tmp_path / "root"), tmp_path / "gate"
    gate.mkdir()
    loser, winner = _project(tmp_path / "loser", root, True), _project(tmp_path / "winner", root, True)
    loser.write("models/m1.py", GATE_IN_TASK.format(gate=str(gate)))
    loser.write("models/m2.sql", WHO)
    winner.write("models/m1.sql", WHO)

    output = _race(
        dbt, loser, winner, gate, ["run", "--vars", "{who: loser}"], ["run", "--vars", "{who: winner}"]
    )
    _said_in_words(output, "another run created race.m1 while this run was building it", "run it again")
    assert "detached commits" not in output
    results = loser.results()
    assert results["m1"]["status"] == "error", results
    # m2 was built and staged, but its run published nothing: dbt must not count it as built
    assert results["m2"]["status"] == "error" and "not published" in results["m2"]["message"], results
    ns = winner.namespace()
    assert _rows(winner, "m1") == (1, ["winner"] * 3)
    assert not ns.table_exists(["race", "m2"])  # staged by the loser, never published
    check_namespace(ns)
    assert not (Path(root) / ".lancens-staging").exists()


def test_conflicting_commit_without_atomic_publish_is_14_in_words(
    tmp_path: Path, built_roots: dict[str, Path], dbt: DbtSession
) -> None:
    """Two runs overwrite m1 from version 1; the loser's commit is refused (14) with a message in
    words, without Lance's Rust source path (`conflict_resolver.rs:...`)."""
    root, gate = str(tmp_path / "root"), tmp_path / "gate"
    gate.mkdir()
    shutil.copytree(built_roots["plain"], root)
    loser, winner = _project(tmp_path / "loser", root, False), _project(tmp_path / "winner", root, False)
    loser.write("models/m1.py", GATE_IN_TASK.format(gate=str(gate)))
    winner.write("models/m1.sql", WHO)
    assert _rows(winner, "m1") == (1, ["build"] * 3)

    output = _race(dbt, loser, winner, gate, ["run"], ["run", "--vars", "{who: winner}"])
    _said_in_words(output, "Lance namespace error 14", "another writer committed a conflicting change")
    assert "run it again" in output
    assert _rows(winner, "m1") == (2, ["winner"] * 3)
    check_namespace(winner.namespace())


def _said(outcome: dict[str, Any]) -> str:
    return outcome["exception"] + "\n".join(node["message"] for node in outcome["nodes"].values())


def test_errors_name_the_root_the_model_and_the_namespace(tmp_path: Path, dbt: DbtSession) -> None:
    uncreatable = _project(tmp_path / "proc", "/proc/lancens-race-root", False)
    uncreatable.write("models/m1.sql", WHO)

    root = str(tmp_path / "root")
    state = _project(tmp_path / "state", root, False)  # the state's target: schema race, never built
    clone = make_project(tmp_path / "clone", root, sample=False, threads=1, schema="race_dev")
    for project in (state, clone):
        project.write("models/py_m.py", "def model(dbt, session):\n    return session.range(1)\n")

    sources = _project(tmp_path / "sources", root, False)
    sources.write(
        "models/sources.yml",
        "version: 2\nsources:\n  - name: raw\n    schema: race.nowhere\n    tables:\n      - name: events\n",
    )
    sources.write("models/reads.sql", "select * from {{ source('raw', 'events') }}")

    proc = dbt.invoke(uncreatable.path, "run", "--vars", "{who: x}")
    read = dbt.invoke(sources.path, "run")  # also creates the schema race, the state's target
    dbt.invoke(state.path, "parse", "--target-path", str(tmp_path / "state" / "state"))
    cloned = dbt.invoke(clone.path, "clone", "--state", str(tmp_path / "state" / "state"))
    said = _said(proc)
    assert not proc["success"]
    assert "the namespace root '/proc/lancens-race-root' cannot be created" in said, said
    assert not SOURCE_LOCATION.search(said), said

    said = _said(cloned)
    assert not cloned["success"] and cloned["nodes"]["py_m"]["status"] == "error", cloned
    assert "model.jaffle_lance.py_m was never built in the state's target" in said, said
    assert "nothing to clone" in said and "as None" not in said, said

    said = _said(read)
    assert not read["success"]
    assert "the namespace (schema) 'race.nowhere' does not exist" in said, said

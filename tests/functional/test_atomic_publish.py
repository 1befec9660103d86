"""Atomic publish: a run's tables become visible together at its end, and a failed run publishes nothing.

The middle run is a real `dbt run` process held inside its last model (a Python model that waits
for a file) while this process reads the namespace with the engine and pylance; the other runs
are in-process. Models a, b exist before; c, d and gate are new in the held run, so both staged
paths (existing table, new table) are read downstream inside the run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import lance
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.functional.atomic_publish_project import AtomicPublishProject, assert_no_orphan_transactions

A = "{{ config(materialized='table') }} select {{ var('gen', 1) }} as gen"
B = "{{ config(materialized='table') }} select gen, gen * 10 as tens from {{ ref('a') }}"
C = "{{ config(materialized='table') }} select gen, tens + 1 as tens from {{ ref('b') }}"
D = "{{ config(materialized='table') }} select gen, tens + 1 as tens from {{ ref('c') }}"
BROKEN = "{{ config(materialized='table', enabled=var('break', false)) }} select * from no_such_table"
GATE = """
import os
import time


def model(dbt, session):
    dbt.config(materialized="table")
    frame = dbt.ref("d")
    gate = os.environ.get("LANCENS_TEST_GATE")
    if gate:
        open(os.path.join(gate, "reached"), "w").close()
        while not os.path.exists(os.path.join(gate, "open")):
            time.sleep(0.2)
    return frame
"""
TABLES = ("a", "b", "c", "d", "gate")


def _wait_for(path: Path, process: subprocess.Popen, limit: float = 300) -> None:
    deadline = time.monotonic() + limit
    while not path.exists():
        assert process.poll() is None, f"dbt exited early:\n{process.stdout.read() if process.stdout else ''}"
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.2)


class TestAtomicPublish(AtomicPublishProject):
    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"a.sql": A, "b.sql": B, "c.sql": C, "d.sql": D, "gate.py": GATE, "broken.sql": BROKEN}

    def _state(self, ns: DirectoryNamespace, schema: list[str]) -> dict[str, tuple[int, list[int]] | None]:
        """Per table: (latest version, gen values) as a namespace reader sees it; None if absent."""
        state: dict[str, tuple[int, list[int]] | None] = {}
        for name in TABLES:
            table = [*schema, name]
            if not ns.table_exists(table):
                state[name] = None
                continue
            info = ns.describe_table(table)
            plain = lance.dataset(info.location)  # a plain Lance reader must agree with the namespace
            assert plain.version == info.version
            state[name] = (info.version, plain.to_table().column("gen").to_pylist())
        return state

    def _assert_no_orphan_transactions(self, ns: DirectoryNamespace, schema: list[str]) -> None:
        for name in TABLES:
            if ns.table_exists([*schema, name]):
                assert_no_orphan_transactions(ns.describe_table([*schema, name]).location)

    def test_publish_together_and_nothing_on_failure(self, project, dbt_profile_target, tmp_path) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        schema = project.test_schema.split(".")
        run_dbt(["run", "--select", "a", "b", "--vars", "{gen: 1}"])
        before = self._state(ns, schema)
        assert before == {"a": (1, [1]), "b": (1, [1]), "c": None, "d": None, "gate": None}

        gate = tmp_path / "gate"
        gate.mkdir()
        env = dict(os.environ, LANCENS_TEST_GATE=str(gate), SPARK_LOCAL_IP="127.0.0.1")
        command = [
            sys.executable,
            "-m",
            "dbt.cli.main",
            "run",
            "--vars",
            "{gen: 2}",
            "--project-dir",
            str(project.project_root),
            "--profiles-dir",
            os.environ["DBT_PROFILES_DIR"],
        ]
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        try:
            _wait_for(gate / "reached", process)
            # a..d are staged inside the held run; another process sees only the old versions
            assert self._state(ns, schema) == before
            (gate / "open").touch()
            output, _ = process.communicate(timeout=300)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == 0, output
        after = self._state(ns, schema)
        assert after == {"a": (2, [2]), "b": (2, [2]), "c": (1, [2]), "d": (1, [2]), "gate": (1, [2])}
        # gate read d, which read c, which read b: the run saw its own staged data
        gate_table = lance.dataset(ns.describe_table([*schema, "gate"]).location).to_table()
        assert gate_table.column("tens").to_pylist() == [22]
        runs = {ns.describe_table_version([*schema, name]).metadata["dbt_invocation_id"] for name in TABLES}
        assert len(runs) == 1
        self._assert_no_orphan_transactions(ns, schema)

        # a failing build stages a..gate but publishes none of them
        run_dbt(["build", "--vars", "{gen: 3, break: true}"], expect_pass=False)
        assert self._state(ns, schema) == after
        self._assert_no_orphan_transactions(ns, schema)

        # a successful build publishes everything
        run_dbt(["build", "--vars", "{gen: 4}"])
        final = self._state(ns, schema)
        assert {name: value[1] for name, value in final.items() if value} == {name: [4] for name in TABLES}
        assert final["a"][0] == 3 and final["gate"][0] == 2
        self._assert_no_orphan_transactions(ns, schema)


class TestAtomicPublishByVar:
    """`--vars '{lancens_atomic_publish: true}'` turns atomic publish on for one run of a project whose
    profile leaves it off; a value that is not true or false fails the run before anything is written."""

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return {
            "on-run-start": ["{{ lancens_begin_atomic_publish() }}"],
            "on-run-end": ["{{ lancens_end_atomic_publish(results) }}"],
        }

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"a.sql": A, "broken.sql": BROKEN}

    def test_var_turns_it_on_and_a_typo_is_named(self, project, dbt_profile_target) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        table = [*project.test_schema.split("."), "a"]
        run_dbt(["run"])
        assert ns.describe_table(table).version == 1

        run_dbt(["run", "--vars", "{gen: 2, break: true}"], expect_pass=False)  # off: `a` commits alone
        assert ns.describe_table(table).version == 2

        run_dbt(["run", "--vars", "{gen: 3, break: true, lancens_atomic_publish: true}"], expect_pass=False)
        info = ns.describe_table(table)
        assert info.version == 2 and lance.dataset(info.location).to_table().column("gen").to_pylist() == [2]

        with pytest.raises(
            DbtRuntimeError, match="var lancens_atomic_publish must be true or false, got 'ture'"
        ):
            run_dbt(["run", "--vars", "{gen: 4, lancens_atomic_publish: ture}"])
        assert ns.describe_table(table).version == 2


NEW_TABLE = "{{ config(materialized='table', enabled=var('new', false)) }} select {{ var('gen', 1) }} as gen"
NEW_VIEW = "{{ config(materialized='view', enabled=var('new', false)) }} select gen from {{ ref('t_new') }}"
OLD_VIEW = "{{ config(materialized='view') }} select gen, {{ var('gen', 1) }} as built from {{ ref('a') }}"
VIEW_DOCS = """
version: 2
models:
  - name: v_new
    description: the new view
    config:
      persist_docs: {relation: true}
"""


class TestAtomicPublishViews(AtomicPublishProject):
    """Views are held back like tables: created or replaced in the run's publish commit, so a failed
    run leaves no view over a table it never published, and no replaced view body either."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {
            "a.sql": A,
            "t_new.sql": NEW_TABLE,
            "v_new.sql": NEW_VIEW,
            "v_old.sql": OLD_VIEW,
            "broken.sql": BROKEN,
            "docs.yml": VIEW_DOCS,
        }

    def test_views_publish_with_the_tables(self, project, dbt_profile_target) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        schema = project.test_schema.split(".")
        run_dbt(["run"])
        old_sql = ns.describe_view([*schema, "v_old"]).sql
        assert ns.list_views(schema).items == ["v_old"]

        # a new table, a view on it, a replaced view and a failing model: nothing appears or changes
        run_dbt(["run", "--vars", "{gen: 2, new: true, break: true}"], expect_pass=False)
        assert not ns.table_exists([*schema, "t_new"])
        assert ns.list_views(schema).items == ["v_old"]
        assert ns.describe_view([*schema, "v_old"]).sql == old_sql

        # the same run without the failure publishes the table and both views together
        run_dbt(["run", "--vars", "{gen: 3, new: true}"])
        assert ns.describe_table_version([*schema, "t_new"]).version == 1
        assert sorted(ns.list_views(schema).items) == ["v_new", "v_old"]
        new_view = ns.describe_view([*schema, "v_new"])
        assert new_view.base_objects == [[*schema, "t_new"]]
        assert new_view.properties.get("comment") == "the new view"  # persist_docs went with it
        assert "3 as built" in ns.describe_view([*schema, "v_old"]).sql
        shown = run_dbt(["show", "--inline", f"select * from {project.test_schema}.v_new"])
        assert shown.results[0].agate_table.rows[0]["gen"] == 3


SWITCHING = "{{ config(materialized=var('kind', 'table')) }} select id from range(3)"


class TestAtomicPublishKindSwitch(AtomicPublishProject):
    """A model changing kind would drop its old table or view at once, which a failed atomic run
    cannot undo: the switch is refused in such a run, and the old object stays as it was."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"switching.sql": SWITCHING}

    def test_table_to_view_and_back_are_refused(self, project, dbt_profile_target) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        table = [project.test_schema, "switching"]
        run_dbt(["run"])
        location = ns.describe_table(table).location

        _, output = run_dbt_and_capture(["run", "--vars", "{kind: view}"], expect_pass=False)
        assert f"turning table {project.test_schema}.switching into a view is refused" in output
        assert lance.dataset(location).count_rows() == 3  # the table's data stays
        assert ns.table_exists(table) and "switching" not in ns.list_views([project.test_schema]).items

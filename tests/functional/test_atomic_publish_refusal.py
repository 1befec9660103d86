"""Atomic publish asked for without the run hooks: every node's write is refused, nothing commits.

Without `lancens_begin_atomic_publish()` nothing stages, so a write would be visible at once (what
the user asked not to happen). Both ways of asking (the profile's `atomic_publish: true`, the var
`lancens_atomic_publish`) refuse every path a run commits by: table, incremental, microbatch, seed,
snapshot, view and `dbt clone`; the namespace is left exactly as it was.
"""

from __future__ import annotations

import shutil
from copy import deepcopy
from pathlib import Path

import lance
import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.lancens.namespace import DirectoryNamespace

REFUSED = "but no atomic-publish run is in progress"
GEN = "{{ var('gen', 1) }}"
MODELS = {
    "t.sql": f"{{{{ config(materialized='table') }}}} select {GEN} as gen",
    "inc.sql": f"{{{{ config(materialized='incremental', unique_key='id') }}}} select 1 as id, {GEN} as gen",
    "mb.sql": f"""
{{{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='event_ts',
          batch_size='day', begin='2024-01-01') }}}}
select {GEN} as gen, timestamp'2024-01-01 10:00:00' as event_ts
""",
    "v.sql": f"{{{{ config(materialized='view') }}}} select {GEN} as gen",
}
SNAPSHOTS = {
    "snap.sql": f"""
{{% snapshot snap %}}
{{{{ config(unique_key='id', strategy='check', check_cols=['gen']) }}}}
select 1 as id, {GEN} as gen
{{% endsnapshot %}}
"""
}
SEEDS = {"s.csv": "id,gen\n1,1\n"}
TABLES = ("t", "inc", "mb", "snap", "s")
WINDOW = ["--event-time-start", "2024-01-01", "--event-time-end", "2024-01-02"]
NODES = {"t", "inc", "mb", "v", "snap", "s"}


def _state(ns: DirectoryNamespace, schema: list[str]) -> dict[str, object]:
    """Every table's (version, rows) and every view's SQL as namespace readers see them."""
    state: dict[str, object] = {}
    for name in TABLES:
        if ns.table_exists([*schema, name]):
            info = ns.describe_table([*schema, name])
            state[name] = (info.version, lance.dataset(info.location).to_table().to_pylist())
    views = ns.list_views(schema).items
    for name in views:
        state[name] = ns.describe_view([*schema, name]).sql
    return state


def _assert_all_refused(results, reason: str) -> None:
    """Every node failed on the refusal; a microbatch model reports its batch's error as `ERROR`."""
    assert {r.node.name for r in results} == NODES and all(r.status == "error" for r in results)
    for result in results:
        batches = result.batch_results
        if batches is not None:
            assert not batches.successful and batches.failed, result.node.name
        else:
            assert f"({reason}) {REFUSED}" in result.message, (result.node.name, result.message)


class _EveryNodeKind:
    """One node of each kind that writes: a table, an incremental, a microbatch, a seed, a snapshot
    and a view."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return MODELS

    @pytest.fixture(scope="class")
    def snapshots(self) -> dict[str, str]:
        return SNAPSHOTS

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return SEEDS


class TestRefusedByVar(_EveryNodeKind):
    """The project var asks for it: the run hooks are missing, so every write is refused."""

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, tmp_path_factory: pytest.TempPathFactory) -> dict:
        root = str(tmp_path_factory.mktemp("refused_root"))
        return {"type": "lancens", "root": root, "master": "local[2]", "threads": 1}

    @pytest.fixture(scope="class")
    def other_schema(self, unique_schema: str) -> str:
        return unique_schema + "_dev"

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target: dict, unique_schema: str, other_schema: str) -> dict:
        outputs = {"default": dbt_profile_target, "dev": deepcopy(dbt_profile_target)}
        outputs["default"]["schema"] = unique_schema
        outputs["dev"]["schema"] = other_schema
        return {"test": {"outputs": outputs, "target": "default"}}

    def test_every_write_is_refused(self, project, dbt_profile_target, other_schema) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        schema = project.test_schema.split(".")
        run_dbt(["build", *WINDOW])
        before = _state(ns, schema)
        assert set(before) == NODES

        # existing tables (incremental, snapshot merge, microbatch batch, seed reload) and a view replaced
        atomic = ["--vars", "{gen: 2, lancens_atomic_publish: true}"]
        results = run_dbt(["build", *WINDOW, *atomic], expect_pass=False)
        _assert_all_refused(results, "var lancens_atomic_publish")
        assert _state(ns, schema) == before

        # dbt clone runs no on-run hooks, so it cannot stage either
        state = Path(project.project_root) / "state"
        shutil.copytree(Path(project.project_root) / "target", state)
        project.create_test_schema(other_schema)
        results = run_dbt(
            ["clone", "--state", str(state), "--target", "dev", "--vars", "{lancens_atomic_publish: true}"],
            expect_pass=False,
        )
        _assert_all_refused(results, "var lancens_atomic_publish")
        assert _state(ns, [other_schema]) == {}
        assert _state(ns, schema) == before


class TestRefusedByProfile(_EveryNodeKind):
    """The profile asks for it: a first build without the hooks creates nothing."""

    @pytest.fixture(scope="class")
    def dbt_profile_target(self, tmp_path_factory: pytest.TempPathFactory) -> dict:
        root = str(tmp_path_factory.mktemp("refused_profile_root"))
        return {"type": "lancens", "root": root, "master": "local[2]", "threads": 1, "atomic_publish": True}

    def test_every_write_is_refused(self, project, dbt_profile_target) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        results = run_dbt(["build", *WINDOW], expect_pass=False)
        _assert_all_refused(results, "atomic_publish: true in the profile")
        assert _state(ns, project.test_schema.split(".")) == {}

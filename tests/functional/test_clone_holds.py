"""`dbt clone` holds the source version it reads: the source's maintenance and purges cannot break it.

A shallow clone reads the source's files in place, so the clone tags that source version
(`lancens-clone.<clone>.held`, metadata/clone_holds.py). Real dbt runs: the source is rebuilt with
`lance_maintenance: {retain_versions: 1}` and the whole root is cleaned up, and the clone still reads
its rows; a purge of the source is refused naming the clone; a `dbt run` that rebuilds the clone as
a real table lets go once its maintenance removes the clone's old versions."""

from __future__ import annotations

import shutil
from copy import deepcopy
from pathlib import Path

import lance
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lancens.metadata.clone_holds import hold_tag
from dbt.adapters.lancens.namespace import DirectoryNamespace

SRC = """
{{ config(materialized='table', lance_maintenance={'retain_versions': 1, 'older_than_days': 0}) }}
select id, {{ var('v', 1) }} as v from range(3)
"""


class TestCloneHolds:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, tmp_path_factory: pytest.TempPathFactory) -> dict:
        root = str(tmp_path_factory.mktemp("clone_holds_root"))
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

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"src.sql": SRC}

    def test_source_maintenance_and_purge_keep_the_clone(
        self, project, dbt_profile_target, other_schema
    ) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        source_id, clone_id = [project.test_schema, "src"], [other_schema, "src"]
        source, clone = f"{project.test_schema}.src", f"{other_schema}.src"

        def read(table: list[str]) -> lance.LanceDataset:
            return lance.dataset(ns.describe_table(table).location)

        run_dbt(["run", "--vars", "{v: 1}"])
        state = Path(project.project_root) / "state"
        shutil.copytree(Path(project.project_root) / "target", state)
        project.create_test_schema(other_schema)
        run_dbt(["clone", "--state", str(state), "--target", "dev"])
        cloned = read(source_id).version
        assert read(source_id).tags.list()[hold_tag(clone_id)]["version"] == cloned

        # the source rebuilt with lance_maintenance {retain_versions: 1}, then the whole root cleaned
        run_dbt(["run", "--vars", "{v: 2}"])
        cleanup = "{retain_versions: 1, older_than_days: 0}"
        run_dbt(["run-operation", "lancens.cleanup_namespace", "--args", cleanup])
        assert sorted(read(clone_id).to_table().column("v").to_pylist()) == [1, 1, 1]
        assert read(source_id).to_table().column("v").to_pylist() == [2, 2, 2]
        assert cloned in {v["version"] for v in read(source_id).versions()}

        _, output = run_dbt_and_capture(
            ["run-operation", "lancens.drop_table", "--args", f"{{relation: {source}, purge: true}}"],
            expect_pass=False,
        )
        assert f"cannot purge {source}: dbt clone(s) {clone} (version {cloned}) read its files" in output
        assert ns.table_exists(source_id) and read(clone_id).count_rows() == 3

        # `dbt run` on the dev target rebuilds the clone as a real table; its maintenance removes the
        # clone's old version, the last that read the source, and with it the hold
        run_dbt(["run", "--target", "dev", "--vars", "{v: 3}"])
        assert read(clone_id).to_table().column("v").to_pylist() == [3, 3, 3]
        assert read(source_id).tags.list() == {}
        run_dbt(["run", "--vars", "{v: 4}"])
        assert [v["version"] for v in read(source_id).versions()] == [read(source_id).version]

        run_dbt(["run-operation", "lancens.drop_table", "--args", f"{{relation: {source}, purge: true}}"])
        assert not ns.table_exists(source_id)
        assert read(clone_id).to_table().column("v").to_pylist() == [3, 3, 3]

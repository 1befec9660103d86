"""`root: .` through dbt (issue #50, repro B): the dbt project directory itself is the namespace root
(`allow_foreign_root: true`), its files three days old; `cleanup_namespace` with its default grace
removes a crashed create's directory and keeps every byte of the project, so the next `dbt run`
still finds its model. A grace below an hour is refused naming `allow_short_grace`, which turns the
check off."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lancens.namespace import DirectoryNamespace, ownership

GOOD = "{{ config(materialized='table') }} select 1 as id, 'from_good_model' as src"
NOTES = {"notes/2024/plan.txt": b"the plan", "data/photo.jpg": b"\xff\xd8 a photo", "README.md": b"# shop"}


def project_files(root: Path) -> dict[str, str]:
    """SHA-256 of every file of the project that is not dbt's output nor the namespace's own."""
    found = {}
    for directory, _, names in os.walk(root):
        relative = os.path.relpath(directory, root)
        top = relative.split(os.sep, 1)[0]
        if top in ("target", "logs", "__manifest") or ownership.is_table_dir_name(top):
            continue
        for name in names:
            path = os.path.join(directory, name)
            found[os.path.relpath(path, root)] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return found


class TestCleanupKeepsTheProjectItIsRootedIn:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, dbt_profile_target: dict, project_root) -> dict:
        return {**dbt_profile_target, "root": str(project_root), "allow_foreign_root": True, "threads": 1}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"good.sql": GOOD}

    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, str]:
        return {"people.csv": "id,name\n1,ada\n"}

    @pytest.fixture(scope="class")
    def macros(self) -> dict[str, str]:
        return {"helpers.sql": "{% macro helper() %}1{% endmacro %}"}

    def test_cleanup_keeps_every_project_file(self, project) -> None:
        root = Path(project.project_root)
        for relative, content in NOTES.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_bytes(content)
        run_dbt(["seed"])
        run_dbt(["run"])
        crashed = root / "0badc0de_crashed"
        lance.fragment.write_fragments(pa.table({"id": [1, 2]}), str(crashed))
        before = project_files(root)
        assert {"dbt_project.yml", "models/good.sql", "seeds/people.csv", "macros/helpers.sql"} <= set(before)
        past = time.time() - 3 * 24 * 3600
        for directory, folders, names in os.walk(root):
            for name in [*names, *folders]:
                os.utime(os.path.join(directory, name), (past, past))

        _, output = run_dbt_and_capture(["run-operation", "lancens.cleanup_namespace"])

        assert project_files(root) == before
        assert not crashed.exists() and "0badc0de_crashed" in output
        results = run_dbt(["run"])
        assert [result.node.name for result in results] == ["good"]
        ns = DirectoryNamespace(str(root))
        table = ns.describe_table([*project.test_schema.split("."), "good"]).location
        assert lance.dataset(table).to_table().to_pylist() == [{"id": 1, "src": "from_good_model"}]

    def test_a_short_grace_needs_its_argument(self, project) -> None:
        _, output = run_dbt_and_capture(
            ["run-operation", "lancens.cleanup_namespace", "--args", "{grace_hours: 0}"], expect_pass=False
        )
        assert "allow_short_grace: true" in output and "below the safe minimum" in output
        relation = f"{project.test_schema}.good"
        _, output = run_dbt_and_capture(
            [
                "run-operation",
                "lancens.cleanup_table_versions",
                "--args",
                f"{{relation: {relation}, grace_hours: 0.5}}",
            ],
            expect_pass=False,
        )
        assert "allow_short_grace: true" in output
        crashed = Path(project.project_root) / "0badc0de_young"
        lance.fragment.write_fragments(pa.table({"id": [1]}), str(crashed))
        _, output = run_dbt_and_capture(
            [
                "run-operation",
                "lancens.cleanup_namespace",
                "--args",
                "{grace_hours: 0, allow_short_grace: true}",
            ]
        )
        assert not crashed.exists() and "0badc0de_young" in output

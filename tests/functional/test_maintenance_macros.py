"""Tags, `at_version` by tag, optimize and cleanup through `dbt run-operation lancens.*`, on a root with
table version management on (the profile flag), read back with pylance and the engine."""

from __future__ import annotations

import lance
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lancens.namespace import DirectoryNamespace, all_pages
from tests.functional.atomic_publish_project import AtomicPublishProject

# Each run appends one batch of 10 rows (gen = the run's var), so the table has one fragment per run.
EVENTS = """
{{ config(materialized='incremental', incremental_strategy='append',
          indexes=[{'columns': ['id'], 'type': 'btree'}]) }}
select id + {{ var('gen', 1) }} * 100 as id, {{ var('gen', 1) }} as gen from range(10)
"""

RELEASED = """
{{ config(materialized='table') }}
select * from {{ at_version(ref('events'), 'release') }}
"""


class TestMaintenanceMacros:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, tmp_path_factory: pytest.TempPathFactory) -> dict:
        root = str(tmp_path_factory.mktemp("maintenance_root"))
        return {
            "type": "lancens",
            "root": root,
            "master": "local[2]",
            "threads": 1,
            "table_version_management": True,
        }

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"events.sql": EVENTS, "released.sql": RELEASED}

    def test_tags_optimize_cleanup(self, project, dbt_profile_target, capsys) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        table = [*project.test_schema.split("."), "events"]
        relation = f"{project.test_schema}.events"
        for gen in (1, 2, 3):
            run_dbt(["run", "--select", "events", "--vars", f"{{gen: {gen}}}"])
        location = ns.describe_table(table).location
        tagged_version = lance.dataset(location).version
        run_dbt(["run-operation", "lancens.create_tag", "--args", f"{{relation: {relation}, tag: release}}"])
        run_dbt(["run", "--select", "events", "--vars", "{gen: 4}"])

        run_dbt(["run-operation", "lancens.list_tags", "--args", f"{{relation: {relation}}}"])
        assert f"release -> version {tagged_version}" in capsys.readouterr().out

        # at_version by tag: the rows of the first three runs
        run_dbt(["run", "--select", "released"])
        released = lance.dataset(ns.describe_table([*table[:-1], "released"]).location).to_table()
        assert sorted(set(released.column("gen").to_pylist())) == [1, 2, 3]

        before = lance.dataset(location)
        assert len(before.get_fragments()) >= 4  # at least one per run
        run_dbt(["run-operation", "lancens.optimize_table", "--args", f"{{relation: {relation}}}"])
        after = lance.dataset(location)
        assert len(after.get_fragments()) == 1
        assert sorted(after.to_table().column("id").to_pylist()) == sorted(
            before.to_table().column("id").to_pylist()
        )
        assert after.stats.index_stats("id_btree")["num_unindexed_rows"] == 0
        # the optimize versions carry who made them
        latest = ns.describe_table_version(table)
        assert latest.metadata.get("dbt_model") == "macro.lancens.optimize_table"

        run_dbt(
            [
                "run-operation",
                "lancens.cleanup_table_versions",
                "--args",
                f"{{relation: {relation}, retain_versions: 1, older_than_days: 0}}",
            ]
        )
        assert "removed" in capsys.readouterr().out
        kept = [v.version for v in all_pages(ns.list_table_versions, table)]
        assert kept == [tagged_version, after.version]
        assert sorted(
            set(lance.dataset(location, version="release").to_table().column("gen").to_pylist())
        ) == [
            1,
            2,
            3,
        ]

        run_dbt(["run-operation", "lancens.delete_tag", "--args", f"{{relation: {relation}, tag: release}}"])
        run_dbt(
            [
                "run-operation",
                "lancens.cleanup_namespace",
                "--args",
                "{retain_versions: 1, older_than_days: 0}",
            ]
        )
        assert [v.version for v in all_pages(ns.list_table_versions, table)] == [after.version]
        assert lance.dataset(location).count_rows() == 40

    def test_restore_by_tag_and_digit_tags_refused(self, project, dbt_profile_target) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        relation = f"{project.test_schema}.events"

        def operation(name: str, args: str, expect_pass: bool = True) -> str:
            _, output = run_dbt_and_capture(
                ["run-operation", f"lancens.{name}", "--args", f"{{relation: {relation}, {args}}}"],
                expect_pass=expect_pass,
            )
            return output

        run_dbt(["run", "--select", "events", "--vars", "{gen: 7}"])
        location = ns.describe_table([*project.test_schema.split("."), "events"]).location
        tagged_ids = sorted(lance.dataset(location).to_table().column("id").to_pylist())
        operation("create_tag", "tag: rel7")
        run_dbt(["run", "--select", "events", "--vars", "{gen: 8}"])
        before = lance.dataset(location).version

        output = operation("restore_table", "version: rel7")
        restored = lance.dataset(location)
        assert f"to tag rel7 as version {before + 1}" in output
        assert restored.version == before + 1
        assert sorted(restored.to_table().column("id").to_pylist()) == tagged_ids

        output = operation("restore_table", "version: rel_missing", expect_pass=False)
        assert f"{relation} has no tag 'rel_missing' (its tags: rel7); give a version number" in output
        assert lance.dataset(location).version == before + 1  # nothing committed

        output = operation("create_tag", "tag: '123'", expect_pass=False)
        assert "tag '123' is only digits: at_version and restore_table would read it as version 123" in output
        assert list(lance.dataset(location).tags.list()) == ["rel7"]


MAINTAINED = """
{% set maintenance = {'retain_versions': 1, 'older_than_days': 0} if var('maintain', false) else none %}
{{ config(materialized='incremental', incremental_strategy='append', lance_maintenance=maintenance) }}
select id + {{ var('gen', 1) }} * 100 as id, {{ var('gen', 1) }} as gen from range(10)
"""
BROKEN = "{{ config(materialized='table') }} select * from {{ ref('maintained') }} where assert_true(id < 0)"


class TestMaintenanceConfigUnderAtomicPublish(AtomicPublishProject):
    """In an atomic-publish run a model's `lance_maintenance` waits for the publish, and a run that
    publishes nothing runs none of it."""

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"maintained.sql": MAINTAINED, "broken.sql": BROKEN}

    def test_maintenance_follows_the_publish(self, project, dbt_profile_target) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        table = [*project.test_schema.split("."), "maintained"]
        for gen in (1, 2):
            run_dbt(["run", "--select", "maintained", "--vars", f"{{gen: {gen}}}"])
        location = ns.describe_table(table).location
        assert [v["version"] for v in lance.dataset(location).versions()] == [1, 2]

        run_dbt(["run", "--vars", "{gen: 3, maintain: true}"], expect_pass=False)  # `broken` fails
        assert [v["version"] for v in lance.dataset(location).versions()] == [1, 2]

        run_dbt(["run", "--select", "maintained", "--vars", "{gen: 4, maintain: true}"])
        published = lance.dataset(location)
        assert [v["version"] for v in published.versions()] == [3]  # cleaned once version 3 was in
        assert sorted(set(published.to_table().column("gen").to_pylist())) == [1, 2, 4]

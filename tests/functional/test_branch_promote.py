"""Write-audit-publish on a branch: `dbt build --target ci` builds and tests on a Lance branch, then
`lancens.promote_branch` makes every table the branch changed main's next version, in one
`__manifest` commit, without writing or copying a data file. A promotion after main moved is
refused naming the tables; a failed audit is never promoted; branches are listed and deleted, a
promoted one once main moved on and a cleanup removed the versions that read its files.

Real dbt runs in process on a root with table version management, read back with the engine and
pylance; files are counted on disk.
"""

from __future__ import annotations

import os
from copy import deepcopy

import lance
import lance.namespace as native_ns
import lance_namespace as lns
import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.lancens.namespace import DirectoryNamespace

A = "{{ config(materialized='table') }} select {{ var('gen', 1) }} as gen"
B = "{{ config(materialized='table') }} select gen, gen * 10 as tens from {{ ref('a') }}"
INC = """
{{ config(materialized='incremental', incremental_strategy='append') }}
select {{ var('gen', 1) }} as gen
"""
UNTOUCHED = "{{ config(materialized='table') }} select 7 as seven"
# The audit: fails when the build's `gen` is 100 or more.
SMALL_GEN = "select * from {{ ref('a') }} where gen >= 100"
TABLES = ("a", "b", "inc")


def rows(location: str, column: str = "gen") -> list[int]:
    return sorted(lance.dataset(location).to_table().column(column).to_pylist())


def files_under(location: str) -> set[str]:
    """Every data (`.lance`) and deletion file anywhere under the table's directory, branches too."""
    found: set[str] = set()
    for folder, _, names in os.walk(location):
        found.update(os.path.join(folder, n) for n in names if n.endswith((".lance", ".arrow", ".bin")))
    return {f for f in found if "/_versions/" not in f and "/_transactions/" not in f}


def first_manifest_version(root: str, object_id: str, after: int) -> int:
    """The first `__manifest` version after `after` that holds the row `object_id`."""
    manifest = lance.dataset(os.path.join(root, "__manifest"))
    for version in range(after + 1, manifest.version + 1):
        found = manifest.checkout_version(version).to_table(filter=f"object_id = '{object_id}'")
        if found.num_rows:
            return version
    raise AssertionError(f"{object_id} is in no __manifest version after {after}")


class TestBranchPromote:
    @pytest.fixture(scope="class")
    def dbt_profile_target(self, tmp_path_factory: pytest.TempPathFactory) -> dict:
        root = str(tmp_path_factory.mktemp("promote_root"))
        return {
            "type": "lancens",
            "root": root,
            "master": "local[2]",
            "threads": 1,
            "table_version_management": True,
        }

    @pytest.fixture(scope="class")
    def profiles_config_update(self, dbt_profile_target: dict, unique_schema: str) -> dict:
        outputs = {"default": dbt_profile_target}
        outputs["default"]["schema"] = unique_schema
        for target, branch in (
            ("ci", "ci_1"),
            ("ci2", "ci_2"),
            ("ci3", "ci_3"),
            ("ci4", "ci_4"),
            ("ci5", "ci_5"),
        ):
            outputs[target] = {**deepcopy(dbt_profile_target), "branch": branch}
        return {"test": {"outputs": outputs, "target": "default"}}

    @pytest.fixture(scope="class")
    def models(self) -> dict[str, str]:
        return {"a.sql": A, "b.sql": B, "inc.sql": INC, "untouched.sql": UNTOUCHED}

    @pytest.fixture(scope="class")
    def tests(self) -> dict[str, str]:
        return {"small_gen.sql": SMALL_GEN}

    def test_write_audit_publish(self, project, dbt_profile_target) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        schema = project.test_schema

        def main(name: str):
            return ns.describe_table([schema, name])

        run_dbt(["build"])
        untouched = main("untouched").version

        # Write and audit on the branch; main unchanged. Then publish: promote.
        run_dbt(["build", "--target", "ci", "--exclude", "untouched", "--vars", "{gen: 2}"])
        before = {name: main(name) for name in TABLES}
        branch_rows = {
            name: rows(ns.describe_table([schema, name], branch="ci_1").location) for name in TABLES
        }
        files = {name: files_under(before[name].location) for name in TABLES}
        manifest_version = lance.dataset(os.path.join(ns.root, "__manifest")).version

        run_dbt(["run-operation", "lancens.promote_branch", "--args", "{branch: ci_1}"])

        for name in TABLES:
            after = main(name)
            assert after.version is not None and after.version > before[name].version, name
            assert rows(after.location) == branch_rows[name], name  # main reads the branch's rows
            assert files_under(after.location) == files[name], name  # no data file written or copied
            assert lance.dataset(after.location).version == after.version  # a plain reader agrees
        assert rows(main("b").location, "tens") == [20]
        assert rows(main("inc").location) == [1, 2]
        assert main("untouched").version == untouched  # not on the branch: not promoted
        # Under table version management the promoted versions appear in ONE __manifest commit.
        rows_of = {f"{schema}${name}${main(name).version}": name for name in TABLES}
        first_seen = {
            name: first_manifest_version(ns.root, row, manifest_version) for row, name in rows_of.items()
        }
        assert len(set(first_seen.values())) == 1, first_seen

        # Main's later commits build on the promoted version.
        run_dbt(["run", "--select", "inc", "--vars", "{gen: 3}"])
        assert rows(main("inc").location) == [1, 2, 3]

        # A promoted branch is kept (main reads its files): deleting it is refused, naming tables.
        _, log = run_dbt_and_capture(
            ["run-operation", "lancens.delete_branch", "--args", "{branch: ci_1}"], expect_pass=False
        )
        assert "was promoted" in log and f"{schema}.a" in log
        assert rows(main("a").location) == [2]

    def test_promotion_refused_after_main_moved(self, project, dbt_profile_target) -> None:
        ns = DirectoryNamespace(dbt_profile_target["root"])
        schema = project.test_schema
        run_dbt(["run", "--target", "ci2", "--select", "a", "b", "--vars", "{gen: 5}"])
        run_dbt(["run", "--select", "a", "--vars", "{gen: 6}"])  # main moves for a, not for b
        before = {name: ns.describe_table([schema, name]).version for name in TABLES}

        _, log = run_dbt_and_capture(
            ["run-operation", "lancens.promote_branch", "--args", "{branch: ci_2}"], expect_pass=False
        )
        assert "cannot be promoted" in log and f"{schema}.a" in log and f"{schema}.b (" not in log
        assert {name: ns.describe_table([schema, name]).version for name in TABLES} == before
        assert rows(ns.describe_table([schema, "a"]).location) == [6]

        # The branch is not promoted, so it can be deleted; then it is gone from every table.
        _, listed = run_dbt_and_capture(["run-operation", "lancens.list_branches"])
        assert "ci_2" in listed
        run_dbt(["run-operation", "lancens.delete_branch", "--args", "{branch: ci_2}"])
        for name in ("a", "b"):
            assert "ci_2" not in [b.name for b in ns.list_table_branches([schema, name]).items]

    def test_a_failed_audit_is_not_promoted(self, project, dbt_profile_target) -> None:
        """The CI recipe: promote only when `dbt build` on the branch passed."""
        ns = DirectoryNamespace(dbt_profile_target["root"])
        schema = project.test_schema
        before = {name: ns.describe_table([schema, name]).version for name in TABLES}
        results = run_dbt(
            ["build", "--target", "ci3", "--exclude", "untouched", "--vars", "{gen: 100}"], expect_pass=False
        )
        assert any(r.status == "fail" for r in results)
        assert rows(ns.describe_table([schema, "a"], branch="ci_3").location) == [100]  # built on the branch
        assert {
            name: ns.describe_table([schema, name]).version for name in TABLES
        } == before  # main untouched
        assert rows(ns.describe_table([schema, "a"]).location) == [6]

    def test_two_branches_at_once(self, project, dbt_profile_target) -> None:
        """Two targets build the same table on branches of their own; each reads its own rows; the
        first promoted wins, the other is refused (main moved), naming the table."""
        ns = DirectoryNamespace(dbt_profile_target["root"])
        table = [project.test_schema, "a"]
        run_dbt(["run", "--select", "a"])
        run_dbt(["run", "--target", "ci4", "--select", "a", "--vars", "{gen: 40}"])
        run_dbt(["run", "--target", "ci5", "--select", "a", "--vars", "{gen: 50}"])
        assert rows(ns.describe_table(table, branch="ci_4").location) == [40]
        assert rows(ns.describe_table(table, branch="ci_5").location) == [50]
        run_dbt(["run-operation", "lancens.promote_branch", "--args", "{branch: ci_4}"])
        assert rows(ns.describe_table(table).location) == [40]
        _, log = run_dbt_and_capture(
            ["run-operation", "lancens.promote_branch", "--args", "{branch: ci_5}"], expect_pass=False
        )
        assert "cannot be promoted" in log and f"{project.test_schema}.a" in log
        assert rows(ns.describe_table(table).location) == [40]

    def test_a_promoted_branch_is_reclaimed_once_main_moved_on(self, project, dbt_profile_target) -> None:
        """ci_1 (promoted in the first test) is kept while main's kept versions, or ci_3 made from
        them, read its files; after main's full refresh, ci_3's deletion and a cleanup of old
        versions, `delete_branch` removes it and its files, and main (pylance, native) reads every row."""
        ns = DirectoryNamespace(dbt_profile_target["root"])
        schema = project.test_schema
        _, log = run_dbt_and_capture(
            ["run-operation", "lancens.delete_branch", "--args", "{branch: ci_1}"], expect_pass=False
        )
        assert "was promoted" in log and f"{schema}.b: main versions" in log and "branch 'ci_3'" in log

        run_dbt(["run", "--full-refresh", "--exclude", "untouched", "--vars", "{gen: 9}"])
        run_dbt(["run-operation", "lancens.delete_branch", "--args", "{branch: ci_3}"])
        _, log = run_dbt_and_capture(
            ["run-operation", "lancens.delete_branch", "--args", "{branch: ci_1}"], expect_pass=False
        )
        assert "main versions" in log  # main's older versions still read it: cleanup first
        cleanup = "{retain_versions: 1, grace_hours: 0, allow_short_grace: true}"
        run_dbt(["run-operation", "lancens.cleanup_namespace", "--args", cleanup])
        run_dbt(["run-operation", "lancens.delete_branch", "--args", "{branch: ci_1}"])

        native = native_ns.DirectoryNamespace(root=dbt_profile_target["root"])
        for name in TABLES:
            location = ns.describe_table([schema, name]).location
            assert not os.path.exists(os.path.join(location, "tree", "ci_1")), name  # reclaimed
            assert "ci_1" not in [b.name for b in ns.list_table_branches([schema, name]).items]
            assert rows(location) == [9], name
            found = native.describe_table(lns.DescribeTableRequest(id=[schema, name])).location
            assert found is not None and rows(found) == [9], name
        run_dbt(["run-operation", "lancens.cleanup_namespace", "--args", cleanup])
        assert rows(ns.describe_table([schema, "b"]).location, "tens") == [90]

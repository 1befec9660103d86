"""dbt-tests-adapter's hooks suite: model, seed, snapshot and run hooks.

The hooks write into Lance tables through dbt-lancens' SQL (`CREATE TABLE`, `INSERT INTO`,
`ALTER TABLE ... ADD COLUMN`, `UPDATE`). Adapted where the suite is Postgres: the hook tables are
created with Spark types instead of the suite's Postgres data files, columns are read with
backticks (Spark reads `"name"` as a string), the `vacuum` hooks are left out (Spark has no VACUUM
for a Lance table), and the recorded target is a lancens one (no host, user or password).
"""

from __future__ import annotations

import os

import pytest
from dbt.tests.adapter.hooks import test_model_hooks as model_hooks
from dbt.tests.adapter.hooks import test_run_hooks as run_hooks

# The columns in the suite's table order (hooks insert `select`s by position).
FIELDS = [
    "test_state",
    "target_dbname",
    "target_host",
    "target_name",
    "target_schema",
    "target_type",
    "target_user",
    "target_pass",
    "target_threads",
    "run_started_at",
    "invocation_id",
    "thread_id",
]
HOOK_TABLE_COLUMNS = ", ".join(f"{name} {'int' if name == 'target_threads' else 'string'}" for name in FIELDS)


def hook_rows(project, table: str, state: str) -> list[dict]:
    columns = ", ".join(f"`{name}`" for name in FIELDS)
    rows = project.run_sql(
        f"select {columns} from {project.test_schema}.{table} where test_state = '{state}'", fetch="all"
    )
    return [dict(zip(FIELDS, row, strict=True)) for row in rows]


def check_lancens_target(ctx: dict, state: str, project, threads: int) -> None:
    assert ctx["test_state"] == state
    assert ctx["target_dbname"] == ""  # a lancens target has no dbname, host, user or password
    assert ctx["target_host"] == ""
    assert ctx["target_name"] == "default"
    assert ctx["target_schema"] == project.test_schema
    assert ctx["target_threads"] == threads
    assert ctx["target_type"] == "lancens"
    assert ctx["target_user"] == ""
    assert ctx["target_pass"] == ""
    assert ctx["run_started_at"], "run_started_at was not set"
    assert ctx["invocation_id"], "invocation_id was not set"
    assert ctx["thread_id"].startswith("Thread-") or ctx["thread_id"] == "MainThread"


class LanceModelHookTable:
    """The `on_model_hook` table as a Lance table, and the lancens values the hooks record."""

    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project) -> None:
        project.run_sql(f"create table {project.test_schema}.on_model_hook ({HOOK_TABLE_COLUMNS})")

    def check_hooks(self, state, project, host, count=1) -> None:
        rows = hook_rows(project, "on_model_hook", state)
        assert len(rows) == count, f"{len(rows)} rows for {state!r}, expected {count}"
        for ctx in rows:
            check_lancens_target(ctx, state, project, project.adapter.config.threads)


PROJECT_HOOKS = {
    "models": {"test": {"pre-hook": [model_hooks.MODEL_PRE_HOOK], "post-hook": [model_hooks.MODEL_POST_HOOK]}}
}


class TestPrePostModelHooks(LanceModelHookTable, model_hooks.BasePrePostModelHooks):
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return PROJECT_HOOKS


class TestHookRefs(LanceModelHookTable, model_hooks.BaseHookRefs):
    pass


class TestPrePostModelHooksOnSeeds(model_hooks.BasePrePostModelHooksOnSeeds):
    pass


class TestHooksRefsOnSeeds(model_hooks.BaseHooksRefsOnSeeds):
    pass


class TestPrePostModelHooksOnSeedsPlusPrefixed(model_hooks.BasePrePostModelHooksOnSeedsPlusPrefixed):
    pass


class TestPrePostModelHooksOnSeedsPlusPrefixedWhitespace(
    model_hooks.BasePrePostModelHooksOnSeedsPlusPrefixedWhitespace
):
    pass


class TestPrePostModelHooksOnSnapshots(model_hooks.BasePrePostModelHooksOnSnapshots):
    pass


class TestPrePostModelHooksInConfig(LanceModelHookTable, model_hooks.BasePrePostModelHooksInConfig):
    pass


class TestPrePostModelHooksInConfigWithCount(
    LanceModelHookTable, model_hooks.BasePrePostModelHooksInConfigWithCount
):
    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        return PROJECT_HOOKS


class TestPrePostModelHooksInConfigKwargs(
    LanceModelHookTable, model_hooks.BasePrePostModelHooksInConfigKwargs
):
    pass


class TestPrePostSnapshotHooksInConfigKwargs(model_hooks.BasePrePostSnapshotHooksInConfigKwargs):
    pass


class TestDuplicateHooksInConfigs(model_hooks.BaseDuplicateHooksInConfigs):
    pass


class TestPrePostRunHooks(run_hooks.BasePrePostRunHooks):
    @pytest.fixture(scope="function")
    def setUp(self, project) -> None:
        schema = project.test_schema
        for table in ("on_run_hook", "schemas", "db_schemas"):
            project.run_sql(f"drop table if exists {schema}.{table}")
        project.run_sql(f"create table {schema}.on_run_hook ({HOOK_TABLE_COLUMNS})")
        os.environ["TERM_TEST"] = "TESTING"

    @pytest.fixture(scope="class")
    def project_config_update(self) -> dict:
        config = run_hooks.BasePrePostRunHooks.project_config_update.__wrapped__(self)
        config["on-run-end"] = [hook.replace(" text", " string") for hook in config["on-run-end"]]
        return config

    def check_hooks(self, state, project, host) -> None:
        rows = hook_rows(project, "on_run_hook", state)
        assert len(rows) == 1, f"{len(rows)} rows for {state!r}"
        check_lancens_target(rows[0], state, project, project.adapter.config.threads)


class TestAfterRunHooks(run_hooks.BaseAfterRunHooks):
    pass

"""The index check after a build (`index_run.build_indexes`) without an `indexes` config: the version
this process's write just committed tells whether dbt built indexes there, without asking the
namespace; a version that records them still has them dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbt.adapters.lancens.commits.table_write import open_write
from dbt.adapters.lancens.definitions.index_config import parse_indexes
from dbt.adapters.lancens.materializations import index_run
from dbt.adapters.lancens.materializations.indexes import apply_indexes, recorded
from dbt.adapters.lancens.runtime.process import LancensRuntime
from tests.unit.adapter.helpers import append_rows, id_rows, shop_runtime

TABLE = ["shop", "orders"]


@pytest.fixture
def runtime(spark, tmp_path: Path) -> LancensRuntime:
    runtime = shop_runtime(tmp_path)
    runtime.namespace.create_table(TABLE, id_rows(0, 3))
    return runtime


def test_a_build_that_left_no_index_record_is_not_checked_again(
    runtime: LancensRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    version = append_rows(runtime, TABLE, id_rows(3, 3))
    committed = runtime.last_committed(TABLE)
    assert committed is not None and committed.version == version

    def asked(*args: object) -> None:
        raise AssertionError("the namespace was asked for the table's latest version")

    monkeypatch.setattr(index_run, "index_commits", asked)
    assert index_run.build_indexes(runtime, TABLE, None, {}) is None


def test_a_build_that_left_dbts_indexes_has_them_dropped_when_the_config_is_gone(
    runtime: LancensRuntime,
) -> None:
    apply_indexes(runtime.namespace, TABLE, parse_indexes([{"columns": ["id"], "type": "btree"}]), {})
    append_rows(runtime, TABLE, id_rows(3, 3))
    committed = runtime.last_committed(TABLE)
    assert committed is not None and recorded(committed) != {}

    outcome = index_run.build_indexes(runtime, TABLE, None, {})

    assert outcome is not None and outcome.dropped == ["id_btree"]


def test_a_write_that_commits_nothing_leaves_the_check_to_the_namespace(runtime: LancensRuntime) -> None:
    append_rows(runtime, TABLE, id_rows(3, 3))
    open_write(runtime, TABLE)  # a later build's write that ends without a commit
    assert runtime.last_committed(TABLE) is None

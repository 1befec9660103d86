"""An atomic-publish run that another writer beat to one of its tables publishes nothing and says
so in words, in process: the real engine and staging, another writer's commit
made through the namespace between the run's stage and its publish. The dbt processes' side (exit
code, dbt's report) is tests/reliability/test_lost_race.py."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import lance
import pyarrow as pa
import pytest
from dbt.artifacts.schemas.results import RunStatus

from dbt.adapters.lancens.commits import publish
from dbt.adapters.lancens.commits.table_write import open_write
from dbt.adapters.lancens.namespace import errors
from dbt.adapters.lancens.runtime.process import LancensRuntime
from tests.unit.adapter.helpers import append_rows, id_rows, shop_runtime

OLD, NEW = ["shop", "old"], ["shop", "new"]


@pytest.fixture
def runtime(spark, tmp_path: Path) -> LancensRuntime:
    return shop_runtime(tmp_path)


def _result(name: str, status: RunStatus) -> SimpleNamespace:
    return SimpleNamespace(node=SimpleNamespace(schema="shop", alias=name), status=status, message="")


def test_a_publish_another_writer_beat_publishes_nothing_and_reports_it(runtime: LancensRuntime) -> None:
    runtime.namespace.create_table(OLD, id_rows(0, 3))
    publish.begin(runtime, "loser")
    append_rows(runtime, OLD, id_rows(3, 3))  # staged as version 2
    runtime.namespace.commit_table(OLD, _append(runtime, id_rows(100, 1)), 1)  # the winner's version 2
    with pytest.raises(publish.LostRace) as lost:
        publish.finish(runtime, ["success"])
    assert "another run published or changed some of this run's tables first" in str(lost.value)
    assert "nothing of this run was published (shop.old discarded): run it again" in str(lost.value)
    assert lost.value.code == 14
    info = runtime.namespace.describe_table(OLD)
    assert info.version == 2  # the winner's; nothing of the loser's rows
    assert sorted(lance.dataset(info.location).to_table().column("id").to_pylist()) == [0, 1, 2, 100]

    built, tested = _result("old", RunStatus.Success), _result("old_test", RunStatus.Success)
    sql = publish.report_lost_race([built, tested], lost.value, "it's lost")
    assert sql == "select raise_error('it\\'s lost')"
    assert built.status == RunStatus.Error and built.message == "built, but not published: it's lost"
    assert tested.status == RunStatus.Success  # not a table the run staged


def _append(runtime: LancensRuntime, rows: pa.Table) -> lance.LanceOperation.Append:
    """Another writer's Append of `rows` to OLD."""
    location = runtime.namespace.describe_table(OLD).location
    fragments = lance.fragment.write_fragments(rows, location, schema=rows.schema)
    return lance.LanceOperation.Append(fragments)


def test_a_new_table_another_run_created_meanwhile_fails_the_write_in_words(runtime: LancensRuntime) -> None:
    publish.begin(runtime, "loser")
    write = open_write(runtime, NEW)  # no table yet: the run's files go to a location of its own
    fragments = write.write_fragments(id_rows(0, 2), id_rows(0, 2).schema, mode="overwrite")
    runtime.namespace.create_table(NEW, id_rows(10, 1))  # the winner's table, at another location
    with pytest.raises(errors.ConcurrentModificationError) as lost:
        write.commit(lance.LanceOperation.Overwrite(id_rows(0, 2).schema, fragments), {}, written=fragments)
    assert "another run created shop.new while this run was building it" in str(lost.value)
    assert "detached" not in str(lost.value)
    publish.finish(runtime, ["error"])
    assert runtime.namespace.describe_table(NEW).version == 1
    assert publish.failed(["success", "error"]) and not publish.failed(["success", "skipped"])

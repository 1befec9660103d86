"""An atomic-publish run whose publish passes the engine's commit point keeps every file its
published versions need, even when finishing them fails (a storage error after the `__manifest`
rows are in): the engine reports the publish, the adapter deletes nothing a version references,
and readers finish the versions."""

from __future__ import annotations

from pathlib import Path

import lance
import pytest

from dbt.adapters.lancens.commits import publish, writes
from dbt.adapters.lancens.commits.table_write import open_write
from dbt.adapters.lancens.namespace.versions import VersionManager
from dbt.adapters.lancens.runtime.landing import DirectLanding
from dbt.adapters.lancens.runtime.process import LancensRuntime
from tests.unit.adapter.helpers import append_rows, id_rows, shop_runtime

OLD, NEW = ["shop", "old"], ["shop", "new"]


@pytest.fixture
def runtime(spark, tmp_path: Path) -> LancensRuntime:
    return shop_runtime(tmp_path)


@pytest.mark.parametrize("step", ["_finalize", "_point_rows"])
def test_a_publish_that_fails_while_finishing_keeps_its_versions(
    runtime: LancensRuntime, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    runtime.namespace.create_table(OLD, id_rows(0, 3))
    publish.begin(runtime, "run-1")
    append_rows(runtime, OLD, id_rows(3, 3))  # an existing table's staged version
    writes.write_arrow(runtime, NEW, id_rows(10, 2), {})  # a new table's

    def unavailable(*args: object, **kwargs: object) -> None:
        raise OSError("storage unavailable")

    monkeypatch.setattr(VersionManager, step, unavailable)
    assert publish.finish(runtime, ["success", "success"]) == {("shop", "old"): 2, ("shop", "new"): 1}
    monkeypatch.undo()
    for table_id, version, ids in ((OLD, 2, list(range(6))), (NEW, 1, [10, 11])):
        info = runtime.namespace.describe_table(table_id)  # finishes the version
        assert info.version == version
        table = lance.dataset(info.location).to_table()
        assert sorted(table.column("id").to_pylist()) == ids
    assert sorted(runtime.sql("SELECT id FROM shop.old").toPandas()["id"]) == list(range(6))


@pytest.mark.parametrize("interruption", [OSError("refused before the commit point"), KeyboardInterrupt()])
def test_a_failed_write_deletes_its_files_only_when_the_commit_cannot_have_landed(
    runtime: LancensRuntime, monkeypatch: pytest.MonkeyPatch, interruption: BaseException
) -> None:
    """An `Exception` from the engine comes before its commit point: the write's data files go. An
    interrupt may come after it: the files stay (unreferenced ones are garbage for cleanup)."""
    runtime.namespace.create_table(OLD, id_rows(0, 3))
    target = open_write(runtime, OLD)
    fragments = target.write_fragments(id_rows(3, 3), target.current.schema)
    files = [Path(target.location) / "data" / data_file.path for f in fragments for data_file in f.files]
    assert files and all(path.exists() for path in files)

    def land(*args: object, **kwargs: object) -> int:
        raise interruption

    monkeypatch.setattr(DirectLanding, "land", land)
    with pytest.raises(type(interruption)):
        target.commit(lance.LanceOperation.Append(fragments), {}, written=fragments)
    assert all(path.exists() for path in files) == isinstance(interruption, KeyboardInterrupt)
    assert runtime.namespace.describe_table(OLD).version == 1


@pytest.mark.parametrize("interruption", [OSError("refused before the commit point"), KeyboardInterrupt()])
def test_a_publish_deletes_staged_files_only_when_it_cannot_have_landed(
    runtime: LancensRuntime, monkeypatch: pytest.MonkeyPatch, interruption: BaseException
) -> None:
    """The same rule for the run's one publish: after an interrupt the staged versions may be in
    `__manifest`, so their data files and manifests stay."""
    runtime.namespace.create_table(OLD, id_rows(0, 3))
    publish.begin(runtime, "run-1")
    append_rows(runtime, OLD, id_rows(3, 3))
    assert runtime.publisher is not None
    staged = [Path(p) for p in runtime.publisher.writes[tuple(OLD)].unpublished_garbage]
    assert any(p.parent.name == "data" for p in staged) and any(p.parent.name == "_versions" for p in staged)
    assert all(p.exists() for p in staged)

    def publish_interrupted(*args: object, **kwargs: object) -> None:
        raise interruption

    monkeypatch.setattr(runtime.namespace, "publish", publish_interrupted)
    with pytest.raises(type(interruption)):
        publish.finish(runtime, ["success"])
    assert all(p.exists() for p in staged) == isinstance(interruption, KeyboardInterrupt)
    assert runtime.publisher is None


def test_deferred_actions_run_only_for_tables_the_run_published(runtime: LancensRuntime) -> None:
    runtime.namespace.create_table(OLD, id_rows(0, 3))
    ran: list[str] = []

    def run(statuses: list[str], defer: dict[str, list[str]]) -> None:
        publish.begin(runtime, f"run-{len(ran)}-{statuses}")
        append_rows(runtime, OLD, id_rows(100, 1))
        assert runtime.publisher is not None
        for label, table_id in defer.items():
            runtime.publisher.defer(table_id, lambda label=label: ran.append(label))
        publish.finish(runtime, statuses)

    run(["success", "error"], {"failed run": OLD})
    assert ran == []
    run(["success"], {"published": OLD, "not written by the run": ["shop", "other"]})
    assert ran == ["published"]  # the failed run's action was dropped with it

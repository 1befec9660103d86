"""Exactly-once under concurrency: N real processes (spawn) race on one root, released together.

Every case runs ``REPEATS`` rounds on a fresh root (``LANCENS_RACE_REPEATS``, default 3; the
stress run sets 20 or more). Checked each round: no worker gets a raw exception, exactly one wins
where one id is contested and the others get the spec codes, the namespace and the files on
storage hold the winner's work and nothing of the losers' (no second row, no orphan directory, no
stray data file), and every operation reported successful is there afterwards.

What the S3 rounds can prove: moto's server (threaded) checks `If-None-Match: *` and then stores
the object as two steps without a lock (`moto/s3/responses.py`, `put_object`), so two conditional
puts of one new key can both succeed there. Real S3 decides them atomically: one wins, the others
get 412 Precondition Failed (s3fs: FileExistsError) or 409 ConditionalRequestConflict. A round on
moto therefore proves the order of our steps and that losers get spec codes, not the atomicity of
the conditional create our reservations, markers and version files rest on; the local rounds
(`O_EXCL`, atomic) prove that. A failure seen once on S3 (two deregisters of a root table both ok)
needed no help from moto: the row went before the `.lance-deregistered` marker, and a second caller in
that gap took the still-listed directory for a V1 table. The marker now comes first
(`tests/unit/namespace/test_deregister_steps.py` stops a deregister between the two steps).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import DirectoryNamespace
from dbt.adapters.lancens.namespace.storage import Storage
from tests.reliability.namespace_race_worker import Outcome, Racers, Task

REPEATS = int(os.environ.get("LANCENS_RACE_REPEATS", "3"))
WORKERS = 4
COMPAT = {"manifest_enabled": True, "dir_listing_enabled": True}
V1 = {"manifest_enabled": False, "dir_listing_enabled": True}


@pytest.fixture(scope="module")
def racers() -> Iterator[Racers]:
    pool = Racers(WORKERS)
    yield pool
    pool.close()


@pytest.fixture(params=["local", "s3"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path | None, dict[str, str]]]:
    """Where the rounds' roots live: a local directory, or moto's S3 server (conditional puts)."""
    if request.param == "local":
        yield tmp_path, {}
    else:
        server = request.getfixturevalue("s3_server")
        yield None, dict(server.storage_options)


def _fresh_root(request: pytest.FixtureRequest, base: Path | None, options: dict[str, str]) -> str:
    name = f"race-{uuid.uuid4().hex[:8]}"
    if base is not None:
        return str(base / name)
    return request.getfixturevalue("s3_server").uri(name)


def _ns(root: str, options: dict[str, str], mode: dict[str, bool] = COMPAT) -> DirectoryNamespace:
    return DirectoryNamespace(root, storage_options=options or None, **mode)


def _object_ids(root: str, options: dict[str, str]) -> list[str]:
    manifest = lance.dataset(f"{root}/__manifest", storage_options=options or None)
    return manifest.to_table(columns=["object_id"])["object_id"].to_pylist()


def _entries(root: str, options: dict[str, str]) -> list[str]:
    return sorted(Storage(root, options).names(root))


def _no_raw(outcomes: list[Outcome]) -> None:
    raw = [outcome for outcome in outcomes if outcome.kind == "raw"]
    assert not raw, raw


def _one_winner(outcomes: list[Outcome], loser_codes: set[int]) -> Outcome:
    _no_raw(outcomes)
    winners = [outcome for outcome in outcomes if outcome.ok]
    assert len(winners) == 1, outcomes
    assert {outcome.value for outcome in outcomes if not outcome.ok} <= loser_codes, outcomes
    return winners[0]


def _data_files_all_referenced(location: str, options: dict[str, str]) -> None:
    """A loser's data files must not stay behind in the winner's table directory."""
    dataset = lance.dataset(location, storage_options=options or None)
    referenced = {
        data_file.path for fragment in dataset.get_fragments() for data_file in fragment.data_files()
    }
    on_disk = set(Storage(location, options).names(f"{location}/data"))
    assert on_disk == referenced


@pytest.mark.parametrize("seeded", [False, True], ids=["fresh_root", "existing_manifest"])
def test_create_namespace_of_distinct_names_loses_nothing(
    request: pytest.FixtureRequest, racers: Racers, place: tuple[Path | None, dict[str, str]], seeded: bool
) -> None:
    """On a fresh root the first creation of ``__manifest`` itself is raced as well."""
    base, options = place
    for _ in range(REPEATS):
        root = _fresh_root(request, base, options)
        if seeded:
            _ns(root, options).create_namespace(["seed"])
        outcomes = racers.round([Task("create_namespaces", root, options)])
        _no_raw(outcomes)
        reported = [name for outcome in outcomes for name, result in outcome.value if result == "ok"]
        failed = [(name, result) for outcome in outcomes for name, result in outcome.value if result != "ok"]
        assert not failed, failed
        expected = sorted(name for [name] in reported) + (["seed"] if seeded else [])
        assert sorted(_ns(root, options).list_namespaces([]).items) == sorted(expected)
        assert sorted(_object_ids(root, options)) == sorted(expected)


@pytest.mark.parametrize("table_id", [["n", "t"], ["t"]], ids=["child", "root_v1_dir"])
def test_create_same_table_exactly_one_winner(
    request: pytest.FixtureRequest,
    racers: Racers,
    place: tuple[Path | None, dict[str, str]],
    table_id: list[str],
) -> None:
    base, options = place
    for _ in range(REPEATS):
        root = _fresh_root(request, base, options)
        _ns(root, options).create_namespace(["n"])
        outcomes = racers.round([Task("create_table", root, options, {"id": table_id})])
        winner = _one_winner(outcomes, {5, 14})
        ns = _ns(root, options)
        info = ns.describe_table(table_id)
        assert info.location == winner.value and info.version == 1
        data = lance.dataset(info.location, storage_options=options or None).to_table()
        assert data.column("writer").to_pylist() == [winner.worker] * (winner.worker + 1)
        assert _object_ids(root, options).count("$".join(table_id)) == 1
        assert len([e for e in _entries(root, options) if e != "__manifest"]) == 1  # no orphan dirs
        _data_files_all_referenced(info.location, options)


@pytest.mark.parametrize("view_id", [["n", "v"], ["v"]], ids=["child", "root"])
def test_create_same_view_exactly_one_winner(
    request: pytest.FixtureRequest,
    racers: Racers,
    place: tuple[Path | None, dict[str, str]],
    view_id: list[str],
) -> None:
    base, options = place
    for _ in range(REPEATS):
        root = _fresh_root(request, base, options)
        _ns(root, options).create_namespace(["n"])
        outcomes = racers.round([Task("create_view", root, options, {"id": view_id})])
        winner = _one_winner(outcomes, {5, 14})
        assert _ns(root, options).describe_view(view_id).sql == winner.value
        assert _object_ids(root, options).count("$".join(view_id)) == 1
        assert len([e for e in _entries(root, options) if e != "__manifest"]) == 1  # losers released theirs


def _table_with_data(root: str, options: dict[str, str], table_id: list[str], mode: dict[str, bool]) -> str:
    ns = _ns(root, options, mode)
    if len(table_id) > 1:
        ns.create_namespace(table_id[:-1])
    return ns.create_table(table_id, pa.table({"id": [1, 2, 3]})).location


@pytest.mark.parametrize(
    ("table_id", "mode"),
    [(["n", "t"], COMPAT), (["t"], COMPAT), (["t"], V1)],
    ids=["child", "root_v1_dir", "v1_mode"],
)
def test_drop_same_table_exactly_one_winner(
    request: pytest.FixtureRequest,
    racers: Racers,
    place: tuple[Path | None, dict[str, str]],
    table_id: list[str],
    mode: dict[str, bool],
) -> None:
    base, options = place
    for _ in range(REPEATS):
        root = _fresh_root(request, base, options)
        location = _table_with_data(root, options, table_id, mode)
        outcomes = racers.round([Task("drop_table", root, options, {"id": table_id, "mode": mode})])
        if mode["manifest_enabled"]:
            assert _one_winner(outcomes, {4}).value == location
        else:  # V1 has no commit point: the drop is the delete, so concurrent drops may all succeed
            _no_raw(outcomes)
            assert any(o.ok for o in outcomes) and all(o.ok or o.value == 4 for o in outcomes), outcomes
        ns = _ns(root, options, mode)
        assert not ns.table_exists(table_id) and ns.list_tables(table_id[:-1]).items == []
        assert not Storage(root, options).has_files(location)
        if mode["manifest_enabled"]:
            assert "$".join(table_id) not in _object_ids(root, options)


@pytest.mark.parametrize("table_id", [["n", "t"], ["t"]], ids=["child", "root_v1_dir"])
def test_deregister_same_table_exactly_one_winner(
    request: pytest.FixtureRequest,
    racers: Racers,
    place: tuple[Path | None, dict[str, str]],
    table_id: list[str],
) -> None:
    base, options = place
    for _ in range(REPEATS):
        root = _fresh_root(request, base, options)
        location = _table_with_data(root, options, table_id, COMPAT)
        outcomes = racers.round([Task("deregister_table", root, options, {"id": table_id})])
        _one_winner(outcomes, {4})
        ns = _ns(root, options)
        assert not ns.table_exists(table_id) and ns.list_tables(table_id[:-1]).items == []
        assert "$".join(table_id) not in _object_ids(root, options)
        # data kept for re-registration
        assert lance.dataset(location, storage_options=options or None).count_rows() == 3


@pytest.mark.parametrize("table_id", [["n", "t"], ["t"]], ids=["child", "root_v1_dir"])
@pytest.mark.parametrize("same_target", [False, True], ids=["distinct_targets", "same_target"])
def test_rename_same_table_exactly_one_winner(
    request: pytest.FixtureRequest,
    racers: Racers,
    place: tuple[Path | None, dict[str, str]],
    table_id: list[str],
    same_target: bool,
) -> None:
    """One table, several renames at once: one new name holds it, no two rows share its directory."""
    base, options = place
    for _ in range(REPEATS):
        root = _fresh_root(request, base, options)
        _table_with_data(root, options, table_id, COMPAT)
        args = {"id": table_id, **({"new_id": [*table_id[:-1], "renamed"]} if same_target else {})}
        outcomes = racers.round([Task("rename_table", root, options, args)])
        winner = _one_winner(outcomes, {4, 5, 14})
        ns = _ns(root, options)
        new_name = "renamed" if same_target else f"r{winner.worker}"
        assert ns.list_tables(table_id[:-1]).items == [new_name]
        info = ns.describe_table([*table_id[:-1], new_name])
        assert info.location == winner.value
        assert lance.dataset(info.location, storage_options=options or None).count_rows() == 3
        rows = [row for row in ns.list_objects() if row.object_type == "table"]
        assert [row.location for row in rows] == [info.location]


def test_register_same_table_exactly_one_winner(
    request: pytest.FixtureRequest, racers: Racers, place: tuple[Path | None, dict[str, str]]
) -> None:
    base, options = place
    for _ in range(REPEATS):
        root = _fresh_root(request, base, options)
        _ns(root, options).create_namespace(["n"])
        lance.write_dataset(pa.table({"id": [1]}), f"{root}/external", storage_options=options or None)
        outcomes = racers.round(
            [Task("register_table", root, options, {"id": ["n", "t"], "location": "external"})]
        )
        _one_winner(outcomes, {5, 14})
        assert _object_ids(root, options).count("n$t") == 1
        assert _ns(root, options).describe_table(["n", "t"]).version == 1


@pytest.mark.parametrize("seeded", [False, True], ids=["fresh_root", "existing_manifest"])
def test_mixed_with_native_writers_loses_nothing(
    request: pytest.FixtureRequest, racers: Racers, tmp_path: Path, seeded: bool
) -> None:
    """Two of our engines and two native pylance namespaces create namespaces, then tables, on one
    root at once: everything either side reported created is there (on a fresh root, unless native's
    own whole-manifest rewrite removed it), and ours never fails raw."""
    for _ in range(REPEATS):
        root = _fresh_root(request, tmp_path, {})
        if seeded:
            _ns(root, {}).create_namespace(["seed"])
        for ours, native, args in (
            ("create_namespaces", "native_create_namespaces", {}),
            ("create_tables", "native_create_tables", {"namespace": ["seed"]}),
        ):
            if args and not seeded:
                continue
            tasks = [Task(ours if i % 2 == 0 else native, root, {}, args) for i in range(WORKERS)]
            outcomes = racers.round(tasks)
            _no_raw(outcomes)
            created = [
                tuple(name) for outcome in outcomes for name, result in outcome.value if result == "ok"
            ]
            ours_failed = [
                (name, result)
                for outcome in outcomes
                if outcome.worker % 2 == 0
                for name, result in outcome.value
                if result != "ok"
            ]
            assert not ours_failed, ours_failed
            ns = _ns(root, {})
            present = {tuple(entry.id) for entry in ns.list_objects()}
            lost = sorted(set(created) - present)
            if not seeded:
                # Native pylance rewrites the whole manifest on each commit (an Overwrite); creating
                # it on a fresh root, it can replace commits made in the same instant. That loss is
                # native's: it is allowed here only when a native whole-manifest rewrite removed it.
                lost = [name for name in lost if not _removed_by_native_rewrite(root, "$".join(name))]
            assert not lost, lost
            assert len(_object_ids(root, {})) == len(set(_object_ids(root, {})))


def _removed_by_native_rewrite(root: str, object_id: str) -> bool:
    """True when the `__manifest` version that dropped `object_id` was not one of our engine's commits.

    Ours are merge-inserts, deletes, compactions and index builds; the native namespace commits
    every change as an Overwrite of all rows (and writes a transaction file only for version 1)."""
    manifest = lance.dataset(f"{root}/__manifest")
    had_it = False
    for entry in manifest.versions():
        version = int(entry["version"])
        ids = lance.dataset(f"{root}/__manifest", version=version).to_table(columns=["object_id"])
        if object_id in ids["object_id"].to_pylist():
            had_it = True
        elif had_it:
            transaction = manifest.read_transaction(version)
            return transaction is None or type(transaction.operation).__name__ == "Overwrite"
    return False


def _mixed(action: str, root: str, args: dict[str, object]) -> list[Task]:
    """Workers 0 and 2 run our engine, 1 and 3 native pylance, all on the same object."""
    return [Task(action if i % 2 == 0 else f"native_{action}", root, {}, args) for i in range(WORKERS)]


def test_create_same_table_mixed_with_native_one_row(
    request: pytest.FixtureRequest, racers: Racers, tmp_path: Path
) -> None:
    """Ours and native create one table at once: one row, and it names a table holding the rows of
    a writer that reported success; our losers get 5 or 14, never a raw error."""
    for _ in range(REPEATS):
        root = _fresh_root(request, tmp_path, {})
        _ns(root, {}).create_namespace(["n"])
        outcomes = racers.round(_mixed("create_table", root, {"id": ["n", "t"]}))
        _no_raw(outcomes)
        ours = [o for o in outcomes if o.worker % 2 == 0]
        assert {o.value for o in ours if not o.ok} <= {5, 14}, outcomes
        winners = [o for o in outcomes if o.ok]
        assert winners and len([o for o in ours if o.ok]) <= 1, outcomes
        assert _object_ids(root, {}).count("n$t") == 1
        info = _ns(root, {}).describe_table(["n", "t"])
        writers = set(lance.dataset(info.location).to_table().column("writer").to_pylist())
        assert len(writers) == 1 and writers <= {o.worker for o in winners}, (writers, outcomes)


def test_drop_same_table_mixed_with_native_gone_once(
    request: pytest.FixtureRequest, racers: Racers, tmp_path: Path
) -> None:
    """Ours and native drop one table at once: at most one of ours succeeds (the others get 4),
    and afterwards the table is gone from the manifest and from storage."""
    for _ in range(REPEATS):
        root = _fresh_root(request, tmp_path, {})
        location = _table_with_data(root, {}, ["n", "t"], COMPAT)
        outcomes = racers.round(_mixed("drop_table", root, {"id": ["n", "t"]}))
        _no_raw(outcomes)
        ours = [o for o in outcomes if o.worker % 2 == 0]
        assert {o.value for o in ours if not o.ok} <= {4}, outcomes
        assert len([o for o in ours if o.ok]) <= 1 and any(o.ok for o in outcomes), outcomes
        ns = _ns(root, {})
        assert not ns.table_exists(["n", "t"]) and ns.list_tables(["n"]).items == []
        assert "n$t" not in _object_ids(root, {})
        assert not Storage(root, {}).has_files(location)


def test_drop_namespace_against_creates_in_it_leaves_no_orphan(
    request: pytest.FixtureRequest, racers: Racers, tmp_path: Path
) -> None:
    """DropNamespace of an empty namespace racing three creates in it (a table, a declared table, a
    child namespace): either the drop wins and every create gets 1, or a create wins and the drop
    gets 3 (spec 002). Before each insert rewrote its parent's row, all four used to succeed,
    leaving rows under a namespace that no longer existed."""
    for _ in range(REPEATS):
        root = _fresh_root(request, tmp_path, {})
        _ns(root, {}).create_namespace(["n"])
        outcomes = racers.round(
            [
                Task("drop_namespace", root, {}, {"id": ["n"]}),
                Task("create_table", root, {}, {"id": ["n", "t1"]}),
                Task("declare_table", root, {}, {"id": ["n", "t2"]}),
                Task("create_namespace", root, {}, {"id": ["n", "c"]}),
            ]
        )
        _no_raw(outcomes)
        dropped, *creates = outcomes
        if dropped.ok:
            assert all(not create.ok and create.value == 1 for create in creates), outcomes
            assert _object_ids(root, {}) == []
            assert [e for e in _entries(root, {}) if e != "__manifest"] == []  # no orphan directory
        else:
            assert dropped.value == 3 and any(create.ok for create in creates), outcomes
            made = sorted(["n$t1", "n$t2", "n$c"][k] for k, create in enumerate(creates) if create.ok)
            assert sorted(_object_ids(root, {})) == sorted(["n", *made])


def test_manifest_upkeep_under_racing_writers_and_a_reader_loses_nothing(
    request: pytest.FixtureRequest, racers: Racers, place: tuple[Path | None, dict[str, str]]
) -> None:
    """Three processes create tables (two in one namespace, one in another) while a
    fourth reads ``__manifest``. Their commits carry the unindexed tail, optimise the indexes and
    compact, racing each other: every table reported created is there once, the files stay
    bounded, and a version opened before the round reads the same rows throughout."""
    from dbt.adapters.lancens.namespace import maintenance

    base, options = place
    # past maintenance.SMALL_ROWS either way, so both the whole-manifest rewrites of a small
    # manifest and, after them, the tail rules and upkeep race
    count = 30 if base is not None else 20
    assert 2 + 12 + 3 * count > maintenance.SMALL_ROWS
    for _ in range(REPEATS):
        root = _fresh_root(request, base, options)
        seed = _ns(root, options)
        seed.create_namespace(["a"])
        seed.create_namespace(["b"])
        for i in range(12):
            seed.create_table(["a", f"seed{i}"], pa.table({"id": [i]}))
        start = lance.dataset(f"{root}/__manifest", storage_options=options or None).version
        write = {"count": count}
        reader = {"version": start, "namespace": ["a"], "seconds": 8 if base is not None else 20}
        outcomes = racers.round(
            [
                Task("create_tables", root, options, {**write, "namespace": ["a"]}),
                Task("create_tables", root, options, {**write, "namespace": ["a"]}),
                Task("create_tables", root, options, {**write, "namespace": ["b"]}),
                Task("read_while_writing", root, options, reader),
            ]
        )
        _no_raw(outcomes)
        failed = [(name, result) for o in outcomes[:3] for name, result in o.value if result != "ok"]
        assert not failed, failed
        assert outcomes[3].value > 0
        ns = _ns(root, options)
        created = {o.worker: [f"w{o.worker}_{k}" for k in range(count)] for o in outcomes[:3]}
        assert ns.list_tables(["a"]).items == sorted(
            [f"seed{i}" for i in range(12)] + created[0] + created[1]
        )
        assert ns.list_tables(["b"]).items == sorted(created[2])
        ids = _object_ids(root, options)
        assert len(ids) == len(set(ids)) == 2 + 12 + 3 * count
        manifest = lance.dataset(f"{root}/__manifest", storage_options=options or None)
        assert manifest.version - start > 3 * count  # upkeep commits raced the writers' commits
        files = maintenance.files(manifest)
        assert files["fragments"] < maintenance.COMPACT_AT_FRAGMENTS + WORKERS, files

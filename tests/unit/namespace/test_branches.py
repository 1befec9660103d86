"""Table branches in the engine (``branch_ops.py``, ``branches.py``): create, list, describe, commit
and delete, on a local root and on moto's S3 server; errors with their codes, and what a branch
does to the table's files (nothing copied on create; its own commits under ``tree/<name>/``).

Native pylance reading and writing the same branches: ``tests/interop/test_branches_native.py``."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import lance
import pyarrow as pa
import pytest

from dbt.adapters.lancens.namespace import BranchInfo, DirectoryNamespace, errors
from tests.unit.namespace.helpers import code_of, make

# one of the unit scopes of a minute or more (its race spawns processes): scheduled first
pytestmark = pytest.mark.slow

TABLE = ["s", "t"]


def _ids(n: int, start: int = 0) -> pa.Table:
    return pa.table({"id": list(range(start, start + n))})


def _append(ns: DirectoryNamespace, data: pa.Table, branch: str | None = None) -> int:
    """Write ``data``'s fragments where the table (or its branch) lives and commit them there."""
    info = ns.describe_table(TABLE, branch=branch)
    fragments = lance.fragment.write_fragments(
        data, info.location, storage_options=ns.storage_options or None
    )
    return ns.commit_table(TABLE, lance.LanceOperation.Append(fragments), info.version, branch=branch)


def _read(ns: DirectoryNamespace, branch: str | None = None) -> list[int]:
    location = ns.describe_table(TABLE, branch=branch).location
    table = lance.dataset(location, storage_options=ns.storage_options or None).to_table()
    return sorted(table.column("id").to_pylist())


def _files(ns: DirectoryNamespace, under: str) -> set[str]:
    """Every file under ``under`` (relative), through the engine's own storage (local or S3)."""
    return set(ns.storage.files(under)) if ns.storage.exists(under) else set()


@pytest.fixture(params=["local", "s3"])
def ns(request: pytest.FixtureRequest, tmp_path: Path) -> DirectoryNamespace:
    """A root with table s.t at version 2 (ids 0-2, then 3-4)."""
    if request.param == "local":
        namespace = make(str(tmp_path / "root"))
    else:
        s3 = request.getfixturevalue("s3_server")
        namespace = make(s3.uri(f"branches-{tmp_path.name}"), **s3.storage_options)
    namespace.create_namespace(["s"])
    namespace.create_table(TABLE, _ids(3))
    _append(namespace, _ids(2, 3))
    return namespace


def test_create_is_zero_copy_and_reads_the_source_version(ns: DirectoryNamespace) -> None:
    location = ns.describe_table(TABLE).location
    data_before = _files(ns, f"{location}/data")
    created = ns.create_table_branch(TABLE, "dev")
    assert created.name == "dev" and created.parent_branch is None and created.parent_version == 2
    assert _files(ns, f"{location}/data") == data_before  # nothing copied...
    branch_files = _files(ns, f"{location}/tree/dev")
    assert branch_files and not [f for f in branch_files if f.startswith("data/")]  # ...nor written
    described = ns.describe_table(TABLE, branch="dev")
    assert (described.location, described.version, described.branch) == (f"{location}/tree/dev", 2, "dev")
    assert described.schema == ns.describe_table(TABLE).schema
    assert _read(ns, "dev") == _read(ns) == [0, 1, 2, 3, 4]
    assert ns.list_table_branches(TABLE).items == [created]


def test_branch_from_an_older_version_and_from_another_branch(ns: DirectoryNamespace) -> None:
    old = ns.create_table_branch(TABLE, "old", from_version=1)
    assert old.parent_version == 1 and _read(ns, "old") == [0, 1, 2]
    _append(ns, _ids(1, 10), branch="old")  # old's version 2: its own, not main's
    child = ns.create_table_branch(TABLE, "old-child", from_branch="old")
    assert (child.parent_branch, child.parent_version) == ("old", 2)
    assert _read(ns, "old-child") == [0, 1, 2, 10]
    first = ns.create_table_branch(TABLE, "old-first", from_version=1, from_branch="old")
    assert _read(ns, "old-first") == [0, 1, 2]
    assert ns.create_table_branch(TABLE, "from-main", from_branch="main").parent_branch is None
    assert ns.describe_table(TABLE, branch="main").version == ns.describe_table(TABLE).version == 2
    assert _append(ns, _ids(1, 20), branch="main") == 3  # a caller that always names its branch
    assert _read(ns) == [0, 1, 2, 3, 4, 20] and _read(ns, "old") == [0, 1, 2, 10]
    assert first.parent_branch == "old"


def test_commits_on_a_branch_and_on_main_do_not_see_each_other(ns: DirectoryNamespace) -> None:
    ns.create_table_branch(TABLE, "dev")
    location = ns.describe_table(TABLE).location
    main_data = _files(ns, f"{location}/data")
    assert _append(ns, _ids(1, 100), branch="dev") == 3
    assert _read(ns, "dev") == [0, 1, 2, 3, 4, 100] and _read(ns) == [0, 1, 2, 3, 4]
    assert _files(ns, f"{location}/data") == main_data  # the branch's file is under tree/dev/data
    assert _append(ns, _ids(1, 200)) == 3  # main's own version 3
    assert _read(ns) == [0, 1, 2, 3, 4, 200] and _read(ns, "dev") == [0, 1, 2, 3, 4, 100]
    assert ns.describe_table(TABLE, branch="dev", version=2).version == 2
    assert [v.version for v in ns.list_table_versions(TABLE).items] == [1, 2, 3]  # main's only


def test_delete_removes_the_branch_files_and_waits_for_its_children(ns: DirectoryNamespace) -> None:
    location = ns.describe_table(TABLE).location
    main_files = _files(ns, location)
    ns.create_table_branch(TABLE, "dev")
    _append(ns, _ids(1, 100), branch="dev")
    ns.create_table_branch(TABLE, "dev-child", from_branch="dev")
    with pytest.raises(errors.InvalidInputError, match="dev-child"):
        ns.delete_table_branch(TABLE, "dev")
    assert _read(ns, "dev-child") == [0, 1, 2, 3, 4, 100]
    assert ns.delete_table_branch(TABLE, "dev-child").name == "dev-child"
    deleted = ns.delete_table_branch(TABLE, "dev")
    assert (deleted.name, deleted.parent_version) == ("dev", 2)
    assert ns.list_table_branches(TABLE).items == []
    assert {f for f in _files(ns, location) if not f.startswith("_refs/")} == main_files
    assert _read(ns) == [0, 1, 2, 3, 4]


def test_list_is_sorted_and_paged(ns: DirectoryNamespace) -> None:
    for name in ["b", "a/x", "c", "A"]:
        ns.create_table_branch(TABLE, name)
    names = [b.name for b in ns.list_table_branches(TABLE).items]
    assert names == ["A", "a/x", "b", "c"]
    page = ns.list_table_branches(TABLE, limit=2)
    assert [b.name for b in page.items] == ["A", "a/x"] and page.next_page_token == "a/x"
    rest = ns.list_table_branches(TABLE, page_token=page.next_page_token)
    assert [b.name for b in rest.items] == ["b", "c"] and rest.next_page_token is None
    assert all(isinstance(b, BranchInfo) for b in rest.items)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "main",
        "a b",
        "a$b",
        "../x",
        "a..b",
        "a\\b",
        "/a",
        "a/",
        "a//b",
        "x.lock",
        "a/./b",
        ".",
        "a" * 300,
        7,
    ],
)
def test_a_bad_name_is_13_naming_it_and_writes_nothing(ns: DirectoryNamespace, name: object) -> None:
    location = ns.describe_table(TABLE).location
    before = _files(ns, location)
    with pytest.raises(errors.InvalidInputError, match="name"):
        ns.create_table_branch(TABLE, name)  # type: ignore[arg-type]
    assert _files(ns, location) == before


def test_errors_have_the_spec_codes_and_change_nothing(ns: DirectoryNamespace) -> None:
    ns.create_table_branch(TABLE, "dev")
    ns.declare_table(["s", "declared"])
    location = ns.describe_table(TABLE).location
    before = _files(ns, location)
    fragments = lance.fragment.write_fragments(_ids(1), location, storage_options=ns.storage_options or None)
    append = lance.LanceOperation.Append(fragments)
    assert code_of(lambda: ns.create_table_branch(TABLE, "dev")) == 23
    assert code_of(lambda: ns.create_table_branch(["s", "nope"], "x")) == 4
    assert code_of(lambda: ns.create_table_branch(["nope", "t"], "x")) == 1
    assert code_of(lambda: ns.create_table_branch(TABLE, "x", from_branch="nope")) == 22
    assert code_of(lambda: ns.create_table_branch(TABLE, "x", from_version=99)) == 11
    assert code_of(lambda: ns.create_table_branch(TABLE, "x", from_version=-1)) == 13
    assert code_of(lambda: ns.create_table_branch(["s", "declared"], "x")) == 11
    assert code_of(lambda: ns.describe_table(TABLE, branch="nope")) == 22
    assert code_of(lambda: ns.describe_table(TABLE, branch="dev", version=1)) == 11
    assert code_of(lambda: ns.describe_table(["s", "nope"], branch="dev")) == 4
    assert code_of(lambda: ns.delete_table_branch(TABLE, "nope")) == 22
    assert code_of(lambda: ns.delete_table_branch(TABLE, "main")) == 13
    assert code_of(lambda: ns.delete_table_branch(["s", "nope"], "dev")) == 4
    assert code_of(lambda: ns.list_table_branches(["s", "nope"])) == 4
    assert code_of(lambda: ns.list_table_branches(TABLE, limit=-1)) == 13
    assert code_of(lambda: ns.commit_table(TABLE, append, 2, branch="nope")) == 22
    assert code_of(lambda: ns.commit_table(TABLE, append, 2, branch="a b")) == 13
    assert code_of(lambda: ns.commit_table(TABLE, append, 2, branch="dev", location=location)) == 13
    assert code_of(lambda: ns.commit_table(["s", "new"], append, None, branch="dev")) == 4
    assert ns.list_table_branches(["s", "declared"]).items == []
    written = {f"data/{f.path}" for fragment in fragments for f in fragment.data_files()}
    assert _files(ns, location) == before | written  # nothing but the test's own data file
    assert _read(ns, "dev") == _read(ns) == [0, 1, 2, 3, 4]


def test_a_root_table_in_v1_mode_has_branches(tmp_path: Path) -> None:
    ns = make(str(tmp_path / "root"), mode="v1")
    info = ns.create_table(["t"], _ids(2))
    ns.create_table_branch(["t"], "dev")
    described = ns.describe_table(["t"], branch="dev")
    assert described.location == f"{info.location}/tree/dev"
    fragments = lance.fragment.write_fragments(_ids(1, 9), described.location)
    ns.commit_table(["t"], lance.LanceOperation.Append(fragments), described.version, branch="dev")
    assert (
        lance.dataset(described.location).count_rows() == 3 and lance.dataset(info.location).count_rows() == 2
    )


def test_branch_commits_leave_managed_main_versions_alone(tmp_path: Path) -> None:
    """Under table version management main's versions are ``__manifest`` rows; a branch's are its
    own files only, as native keeps them (native has no rows for branches)."""
    ns = make(str(tmp_path / "root"))
    ns._context.manifest.set_metadata({"table_version_management": "true"})
    ns.create_namespace(["s"])
    ns.create_table(TABLE, _ids(3))
    _append(ns, _ids(1, 3))
    ns.create_table_branch(TABLE, "dev")
    rows_before = ns._context.manifest.by_id()
    assert _append(ns, _ids(1, 50), branch="dev") == 3
    assert ns._context.manifest.by_id() == rows_before
    assert [v.version for v in ns.list_table_versions(TABLE).items] == [1, 2]
    assert _read(ns, "dev") == [0, 1, 2, 3, 50] and _read(ns) == [0, 1, 2, 3]


def test_cleanup_keeps_a_living_branch_and_reclaims_it_after_delete(tmp_path: Path) -> None:
    """The adapter's cleanup (``metadata/maintenance.py``) must keep the main versions and files a
    branch reads while it lives, and reclaim them once it is deleted."""
    from dbt.adapters.lancens.metadata import maintenance

    ns = make(str(tmp_path / "root"))
    ns.create_namespace(["s"])
    location = ns.create_table(TABLE, _ids(3)).location
    ns.create_table_branch(TABLE, "dev")  # reads version 1's data file
    _append(ns, _ids(1, 7), branch="dev")
    first_data = _files(ns, f"{location}/data")
    lance.write_dataset(_ids(1, 90), location, mode="overwrite")
    lance.write_dataset(_ids(1, 91), location, mode="overwrite")

    def cleanup() -> None:
        maintenance.cleanup_table(ns, TABLE, retain_versions=1)

    cleanup()
    assert first_data <= _files(ns, f"{location}/data")
    assert _read(ns, "dev") == [0, 1, 2, 7] and _read(ns) == [91]
    ns.delete_table_branch(TABLE, "dev")
    cleanup()
    assert not first_data & _files(ns, f"{location}/data")
    assert _read(ns) == [91]


def _create_dev(root: str) -> str:
    """One racer (a spawned process: pylance is not fork-safe): create branch dev of s.t."""
    try:
        DirectoryNamespace(root).create_table_branch(TABLE, "dev")
        return "ok"
    except errors.NamespaceError as exc:
        return str(exc.code)


def test_racing_creators_of_one_name_have_exactly_one_winner(tmp_path: Path) -> None:
    root = str(tmp_path / "root")
    ns = make(root)
    ns.create_namespace(["s"])
    ns.create_table(TABLE, _ids(3))
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        results = pool.map(_create_dev, [root] * 4)
    assert sorted(results) == ["23", "23", "23", "ok"]
    assert [b.name for b in ns.list_table_branches(TABLE).items] == ["dev"]
    assert _read(ns, "dev") == [0, 1, 2]


def _create_dev_from(args: tuple[str, int, str, object]) -> str:
    """One racer of two (spawned): wait for the other, then create ``name`` from ``version``."""
    root, version, name, barrier = args
    ns = DirectoryNamespace(root)
    barrier.wait()  # type: ignore[attr-defined]
    try:
        ns.create_table_branch(TABLE, name, from_version=version)
        return "ok"
    except errors.NamespaceError as exc:
        return str(exc.code)


def test_a_racing_losers_manifest_does_not_become_the_branch(tmp_path: Path) -> None:
    """Two processes create one name from different versions at once (Lance writes the branch's
    manifest before the ref that decides the race): exactly one wins, the other gets 23, and the
    branch holds the winner's manifest only, so it reads the winner's source version."""
    root = str(tmp_path / "root")
    ns = make(root)
    ns.create_namespace(["s"])
    location = ns.create_table(TABLE, _ids(3)).location
    _append(ns, _ids(2, 3))  # version 1: ids 0-2; version 2: ids 0-4
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, context.Pool(2) as pool:
        for round_ in range(6):
            name = f"dev{round_}"
            barrier = manager.Barrier(2)
            results = pool.map(_create_dev_from, [(root, 1, name, barrier), (root, 2, name, barrier)])
            assert sorted(results) == ["23", "ok"], results
            winner = results.index("ok") + 1
            [record] = [b for b in ns.list_table_branches(TABLE).items if b.name == name]
            assert record.parent_version == winner
            manifests = [
                f for f in _files(ns, f"{location}/tree/{name}/_versions") if f.endswith(".manifest")
            ]
            assert len(manifests) == 1, manifests  # no loser's manifest beside the winner's
            assert ns.describe_table(TABLE, branch=name).version == winner
            assert _read(ns, name) == ([0, 1, 2] if winner == 1 else [0, 1, 2, 3, 4])
    assert not ns.storage.has_files(f"{root}/.lancens-branches")  # every claim released

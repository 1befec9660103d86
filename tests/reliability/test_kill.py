"""SIGKILL a real `dbt build` (dbt, its JVM and Python workers) in the middle of a write.

1. During a table write: a Python model whose first partition blocks; the other partitions have
   written their fragments when the kill lands, the commit has not run. The table existed before,
   so readers must still see its old version.
2. During a `__manifest` commit: with table version management on, the engine's crash hook
   (`LANCENS_PAUSE_AT_STEP=row_inserted`) stops the commit right after its `__manifest` row insert,
   before the version file is finalized; the kill lands there.

After each kill the namespace lists, every table opens at a committed version, no row is doubled,
and a re-run succeeds.
"""

from __future__ import annotations

import glob
from pathlib import Path

import lance
import pyarrow as pa

from tests.reliability.helpers import check_namespace, kill_group, make_project, wait_for

SLOW_MODEL = """
import time


def model(dbt, session):
    dbt.config(materialized="table")

    def block_first(batches):
        for batch in batches:
            if 0 in set(batch["id"]):
                time.sleep(3600)  # killed long before this returns
            yield batch

    return session.range(0, 400, 1, 4).mapInPandas(block_first, "id long")
"""
FAST_MODEL = "select id from range(0, 400, 1, 4)"
KEEP_MODEL = "select 1 as id"


def _rows(ns, name: str) -> list[int]:
    info = ns.describe_table(["analytics", name])
    return sorted(lance.dataset(info.location, version=info.version).to_table().column("id").to_pylist())


def test_kill_during_table_write_and_manifest_commit(tmp_path: Path) -> None:
    root = tmp_path / "root"
    project = make_project(tmp_path / "proj", str(root), sample=False)
    ns = project.namespace()
    ns.create_namespace(["analytics"])
    ns.create_table(["analytics", "slow"], pa.table({"id": pa.array([-1, -2], pa.int64())}))

    # 1. table write: wait until fragments of the new version are on disk, then kill.
    project.write("models/slow.py", SLOW_MODEL)
    location = ns.describe_table(["analytics", "slow"]).location
    old_files = set(glob.glob(f"{location}/data/*.lance"))
    victim = project.start("build")
    wait_for(
        lambda: len(set(glob.glob(f"{location}/data/*.lance")) - old_files) >= 2,
        "fragments of the slow model",
        process=victim,
    )
    kill_group(victim)
    assert len(set(glob.glob(f"{location}/data/*.lance")) - old_files) >= 2  # the write was under way
    check_namespace(ns)
    assert ns.describe_table(["analytics", "slow"]).version == 1
    assert _rows(ns, "slow") == [-2, -1]

    project.remove("models/slow.py")
    project.write("models/slow.sql", FAST_MODEL)
    rerun = project.run("build")
    assert rerun.returncode == 0, rerun.output[-3000:]
    assert _rows(ns, "slow") == list(range(400))
    version_before = ns.describe_table(["analytics", "slow"]).version

    # 2. __manifest commit: version management on, pause after the row insert, kill there.
    tvm = {"table_version_management": True}
    managed = make_project(tmp_path / "managed", str(root), sample=False, extra=tvm)
    managed.write("models/slow.sql", "select id * 2 as id from range(0, 400, 1, 4)")
    markers = tmp_path / "markers"
    markers.mkdir()
    victim = managed.start("build", env={"LANCENS_PAUSE_AT_STEP": f"row_inserted:{markers}"})
    wait_for(lambda: (markers / "row_inserted").exists(), "the __manifest row insert", process=victim)
    kill_group(victim)

    counts = check_namespace(managed.namespace())  # a namespace reader finishes the commit
    assert counts[("analytics", "slow")] == 400
    assert ns.describe_table(["analytics", "slow"]).version == version_before + 1
    assert _rows(ns, "slow") == [2 * i for i in range(400)]

    rerun = managed.run("build")
    assert rerun.returncode == 0, rerun.output[-3000:]
    assert ns.describe_table(["analytics", "slow"]).version == version_before + 2
    assert _rows(ns, "slow") == [2 * i for i in range(400)]
    check_namespace(ns)

"""`root: .` without `allow_foreign_root` (issue #50): a real `dbt run` whose root is the project's
own directory stops at its first write with an error naming the root, what is in it and the
profile key, and writes nothing: every project file keeps its bytes and no `__manifest` appears.
With the key in the profile the same project builds.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml

from tests.reliability.helpers import make_project


def _files(directory: Path) -> dict[str, str]:
    """SHA-256 of every file under `directory` but dbt's own output (`target/`, `logs/`)."""
    return {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and path.relative_to(directory).parts[0] not in ("target", "logs")
    }


def test_a_run_rooted_in_its_own_project_is_refused_until_the_profile_allows_it(tmp_path: Path) -> None:
    directory = tmp_path / "project"
    project = make_project(directory, ".", sample=False, threads=1)
    project.write("models/good.sql", "select 1 as id")
    before = _files(directory)

    refused = project.run("run")

    assert refused.returncode != 0, refused.output
    output = " ".join(refused.output.split())  # dbt wraps long lines
    assert str(directory) in output and "allow_foreign_root: true" in output, refused.output
    assert "models/" in output and "Traceback" not in output
    assert _files(directory) == before and not (directory / "__manifest").exists()

    profile = yaml.safe_load((directory / "profiles.yml").read_text())
    for target in profile.values():
        target["outputs"]["t"]["allow_foreign_root"] = True
    (directory / "profiles.yml").write_text(yaml.safe_dump(profile))
    built = project.run("run")
    assert built.returncode == 0, built.output
    assert built.results["good"]["status"] == "success"
    assert (directory / "__manifest").is_dir()

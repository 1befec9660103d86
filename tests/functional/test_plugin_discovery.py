"""`dbt --version` and `dbt init` find the lancens plugin, also in an editable install.

The test environment itself is an editable install (`pip install -e .[test]`, scripts/test.sh), where
dbt-core's plugin discovery (a glob of `dbt/adapters/*/__version__.py` in the directories of the
`dbt.adapters` package spec) does not see the project's source tree by itself.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from dbt.adapters.lancens.__version__ import version
from tests.reliability.helpers import dbt_env

DBT = str(Path(sys.executable).parent / "dbt")


def test_version_lists_lancens(tmp_path: Path) -> None:
    done = subprocess.run(
        [DBT, "--version"], cwd=tmp_path, env=dbt_env(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert f"lancens: {version}" in done.stdout, done.stdout


def test_init_offers_lancens_and_writes_its_profile(tmp_path: Path) -> None:
    listing = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json; from dbt.version import _get_adapter_plugin_names as names; "
            "print(json.dumps(list(names())))",
        ],
        cwd=tmp_path,
        env=dbt_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    plugins = json.loads(listing.stdout)
    assert "lancens" in plugins, listing.stdout + listing.stderr
    choice = plugins.index("lancens") + 1
    answers = f"{choice}\n./warehouse\nanalytics\nlocal[*]\n1\n"
    done = subprocess.run(
        [DBT, "init", "new_project", "--profiles-dir", str(tmp_path)],
        cwd=tmp_path,
        env=dbt_env(),
        input=answers,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"[{choice}] lancens" in done.stdout
    profile = yaml.safe_load((tmp_path / "profiles.yml").read_text())["new_project"]
    assert profile["outputs"]["dev"] == {
        "type": "lancens",
        "root": "./warehouse",
        "schema": "analytics",
        "master": "local[*]",
        "threads": 1,
    }
    assert (tmp_path / "new_project" / "dbt_project.yml").exists()

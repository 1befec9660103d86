"""docs/architecture.md names only files that exist, and names every package of the adapter."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
BASES = (
    ROOT,
    ROOT / "dbt" / "adapters" / "lancens",
    ROOT / "dbt" / "include" / "lancens",
    ROOT / "dbt" / "include" / "lancens" / "macros",
    ROOT / "docs",
)
FILE_NAME = re.compile(r"[\w./-]+\.(?:py|sql|md)\b(?!\()")
NOT_FILES = {"LancensRuntime.sql"}  # the runtime's method


def named_files() -> set[str]:
    text = re.sub(r"```.*?```", "", DOC.read_text(), flags=re.S)
    spans = re.findall(r"`([^`]+)`", text) + re.findall(r"\]\(([^)]+)\)", text)
    return {
        name
        for span in spans
        for name in FILE_NAME.findall(span)
        if not name.startswith(".") and name not in NOT_FILES
    }


def exists(name: str) -> bool:
    if "/" in name:
        return any((base / name).is_file() for base in BASES)
    return any(any(base.rglob(name)) for base in (*BASES[1:3], BASES[4]))


def test_every_file_the_architecture_names_exists() -> None:
    assert named_files(), "the pattern found no file names"
    assert sorted(name for name in named_files() if not exists(name)) == []


def test_every_package_is_in_the_picture() -> None:
    text = DOC.read_text()
    packages = {path.parent.name for path in (ROOT / "dbt" / "adapters" / "lancens").glob("*/__init__.py")}
    assert sorted(package for package in packages if f"{package}/" not in text) == []

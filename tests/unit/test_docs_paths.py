"""Every file the docs name exists: the README and docs/*.md stay true to the tree as code moves.

A path in backticks (`spark/session.py`, `benchmarks/dbt_run.py`, `tests/unit/test_layers.py::Test`,
`materializations/indexes.sql`, `commits/landing.land`: `land` in landing.py) is looked up from the
repository root, the adapter package (`dbt/adapters/lancens/`), its macros' package
(`dbt/include/lancens/`) and the macros folder (`dbt/include/lancens/macros/`); a module name
(`dbt.adapters.lancens.spark.session`, `runtime.landing.land`) must name a module of the adapter, or
up to two names its source mentions (a function, a class and its method); `Class.method` of a class
the adapter defines (`TableWrite.commit`) must be defined in its module or a mixin; a relative
Markdown link (`[x](materializations.md#anchor)`) must name a file next to the doc. Names with
placeholders (`<root>/...`, `d*.manifest`) and bare file names (`reader.py`) are not checked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

DOCS = sorted(
    path.relative_to(ROOT).as_posix() for path in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
)

# Where a path in the docs may start: the repository root, the adapter and the macros' package.
BASES = [
    ROOT,
    ROOT / "dbt" / "adapters" / "lancens",
    ROOT / "dbt" / "include" / "lancens",
    ROOT / "dbt" / "include" / "lancens" / "macros",
]
# A checked path starts with one of these folders (so `target/run`, `s3://...` are left alone): the
# folders named here, so a folder that disappears is still checked, and every folder the bases hold.
FIRST_FOLDERS = {"dbt", "benchmarks", "tests", "scripts", "docs", "macros", "spark", "namespace"} | {
    path.name for base in BASES for path in base.iterdir() if path.is_dir() and not path.name.startswith(".")
} - {"target", "dbt_packages", "logs"}
PATH_IN_BACKTICKS = re.compile(r"`([A-Za-z0-9_.][A-Za-z0-9_./-]*/[A-Za-z0-9_./:-]*)`")
MODULE_IN_BACKTICKS = re.compile(r"`(dbt\.adapters\.lancens(?:\.[A-Za-z_][A-Za-z0-9_]*)*)`")
# `runtime.landing.land`: a name inside the adapter's folders (`spark.` is left out: Spark's settings).
RELATIVE_MODULE_IN_BACKTICKS = re.compile(
    r"`((?:adapter|runtime|definitions|text|commits|namespace|metadata|materializations|statements)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`"
)
# `TableWrite.commit`, `RunPublisher.stage_chained`: a method or attribute of one of the adapter's classes.
CLASS_ATTRIBUTE_IN_BACKTICKS = re.compile(r"`([A-Z][A-Za-z0-9]*)\.([A-Za-z_][A-Za-z0-9_]*)")
LOCAL_LINK = re.compile(r"\]\(([^)#\s:]+)(?:#[^)]*)?\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def _text(doc: str) -> str:
    return FENCE.sub("", (ROOT / doc).read_text())


def _path_exists(path: str) -> bool:
    """`path` exists, or names a module's attribute (`commits/landing.land`: `land` in landing.py);
    a test's `file.py::TestClass::test_name` must name what the file defines."""
    path, *test_names = path.split("::")
    path = path.rstrip("/")
    candidates = [path]
    if "." in path.rsplit("/", 1)[-1]:
        candidates.append(path.rsplit("/", 1)[0] + "/" + path.rsplit("/", 1)[-1].split(".")[0] + ".py")
    found = [base / candidate for base in BASES for candidate in candidates if (base / candidate).exists()]
    if not found or not test_names:
        return bool(found)
    source = found[0].read_text()
    return all(re.search(rf"\b(class|def) {name}\b", source) for name in test_names if name)


def _module_file(parts: list[str]) -> Path | None:
    """The source of the adapter's module `parts` (a package's `__init__.py`), if it exists."""
    path = ROOT.joinpath("dbt", "adapters", "lancens", *parts)
    candidates = [path.with_suffix(".py"), path / "__init__.py"] if parts else [path / "__init__.py"]
    return next((candidate for candidate in candidates if candidate.exists()), None)


def _module_exists(module: str) -> bool:
    """`module` is an adapter module, or names (up to two) attributes of one that its source defines."""
    parts = module.split(".")[3:]
    for attributes in range(0, min(2, len(parts)) + 1):
        source = _module_file(parts[: len(parts) - attributes])
        if source is not None:
            return all(
                re.search(rf"\b{name}\b", source.read_text()) for name in parts[len(parts) - attributes :]
            )
    return False


def missing_paths(doc: str) -> list[str]:
    found = []
    for path in PATH_IN_BACKTICKS.findall(_text(doc)):
        if path.split("/")[0] in FIRST_FOLDERS and not _path_exists(path):
            found.append(path)
    return found


def missing_modules(doc: str) -> list[str]:
    text = _text(doc)
    modules = MODULE_IN_BACKTICKS.findall(text)
    modules += [f"dbt.adapters.lancens.{name}" for name in RELATIVE_MODULE_IN_BACKTICKS.findall(text)]
    return [module for module in modules if not _module_exists(module)]


def _sources() -> dict[Path, str]:
    return {path: path.read_text() for path in (ROOT / "dbt" / "adapters" / "lancens").rglob("*.py")}


def missing_class_attributes(doc: str) -> list[str]:
    """`Class.name` where the adapter defines `Class` and neither its module nor a mixin defines `name`.

    A class the adapter does not define (Spark's, Lance's, dbt's) is not checked.
    """
    sources = _sources()
    defined_in: dict[str, list[str]] = {}
    for source in sources.values():
        for name in re.findall(r"^\s*class (\w+)", source, re.MULTILINE):
            defined_in.setdefault(name, []).append(source)
    missing = []
    for cls, name in CLASS_ATTRIBUTE_IN_BACKTICKS.findall(_text(doc)):
        if cls not in defined_in:
            continue
        in_class_module = any(re.search(rf"\bdef {name}\b|\b{name}\s*[:=]", s) for s in defined_in[cls])
        in_a_mixin = any(re.search(rf"\bdef {name}\b", s) for s in sources.values())
        if not (in_class_module or in_a_mixin):
            missing.append(f"{cls}.{name}")
    return missing


def missing_links(doc: str) -> list[str]:
    folder = (ROOT / doc).parent
    return [link for link in LOCAL_LINK.findall(_text(doc)) if not (folder / link).exists()]


def test_the_check_sees_the_docs():
    assert "README.md" in DOCS and "docs/benchmarks.md" in DOCS
    assert {"benchmarks", "tests", "scripts", "spark", "namespace", "macros"} <= FIRST_FOLDERS


@pytest.mark.parametrize("doc", DOCS)
def test_named_files_exist(doc):
    assert missing_paths(doc) == []


@pytest.mark.parametrize("doc", DOCS)
def test_named_modules_exist(doc):
    assert missing_modules(doc) == []


@pytest.mark.parametrize("doc", DOCS)
def test_named_class_attributes_exist(doc):
    assert missing_class_attributes(doc) == []


@pytest.mark.parametrize("doc", DOCS)
def test_local_links_resolve(doc):
    assert missing_links(doc) == []

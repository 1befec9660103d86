"""Tags: names for table versions (Lance's own tags, `_refs/tags/` at the table's location).

A tagged version is what a team wants to keep and read again by name: a release, an audited
state. Lance's cleanup never removes a tagged version (`maintenance.cleanup_table`), and
`at_version(ref('x'), 'tag')` reads it. Tags live with the table's files, so pylance and LanceDB
see them too (`dataset.tags.list()`).
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.lancens.metadata.engine_dataset import latest
from dbt.adapters.lancens.namespace import DirectoryNamespace


class TagError(ValueError):
    """A tag that cannot be created, found or deleted; the message names the table and the tag."""


def create_tag(namespace: DirectoryNamespace, table_id: list[str], tag: str, version: int | None) -> int:
    """Tag `version` (default: the latest) of the table; returns the tagged version."""
    if not isinstance(tag, str) or not tag.strip():
        raise TagError(f"a tag must be a non-empty string, got {tag!r}")
    if tag.strip().isdecimal():
        raise TagError(
            f"tag {tag!r} is only digits: at_version and restore_table would read it as version "
            f"{tag.strip()}; give it a name with a letter, e.g. 'v{tag.strip()}'"
        )
    dataset = latest(namespace, table_id)
    tags = dataset.tags.list()
    if tag in tags:
        raise TagError(
            f"{_name(table_id)} already has tag {tag!r} (version {tags[tag]['version']}); "
            "delete it first to move it"
        )
    target = dataset.version if version is None else int(version)
    known = {int(v["version"]) for v in dataset.versions()}
    if target not in known:
        raise TagError(
            f"{_name(table_id)} has no version {target} (its versions: {min(known)}..{max(known)}, "
            "less those a cleanup removed)"
        )
    dataset.tags.create(tag, target)
    return target


def delete_tag(namespace: DirectoryNamespace, table_id: list[str], tag: str) -> int:
    """Remove the tag (the version stays until a cleanup removes it); returns the version it named."""
    dataset = latest(namespace, table_id)
    version = resolve_tag(dataset.tags.list(), table_id, tag)
    dataset.tags.delete(tag)
    return version


def list_tags(namespace: DirectoryNamespace, table_id: list[str]) -> list[dict[str, Any]]:
    """The table's tags, by version then name: tag, version, created_at (UTC ISO)."""
    tags = latest(namespace, table_id).tags.list()
    rows = [
        {
            "tag": name,
            "version": int(tag["version"]),
            "created_at": created.isoformat(timespec="seconds")
            if (created := tag.get("created_at"))
            else None,
        }
        for name, tag in tags.items()
    ]
    return sorted(rows, key=lambda row: (row["version"], row["tag"]))


def tagged_versions(namespace: DirectoryNamespace, table_id: list[str]) -> set[int]:
    return {row["version"] for row in list_tags(namespace, table_id)}


def version_of(namespace: DirectoryNamespace, table_id: list[str], reference: int | str) -> int:
    """A version number, or the version a tag names (`at_version(ref('x'), 'release')`,
    `restore_table`). Digits are a version number: `create_tag` refuses digit-only tags."""
    if isinstance(reference, int) and not isinstance(reference, bool):
        return reference
    if not isinstance(reference, str) or not reference.strip():
        raise TagError(f"a version must be a version number or a tag name, got {reference!r}")
    if reference.strip().isdecimal():
        return int(reference)
    try:
        return resolve_tag(latest(namespace, table_id).tags.list(), table_id, reference)
    except TagError as exc:
        raise TagError(f"{exc}; give a version number or one of its tags") from None


def resolve_tag(tags: dict[str, Any], table_id: list[str], tag: str) -> int:
    if tag not in tags:
        known = ", ".join(sorted(tags)) or "none"
        raise TagError(f"{_name(table_id)} has no tag {tag!r} (its tags: {known})")
    return int(tags[tag]["version"])


def format_tags(table_id: list[str], rows: list[dict[str, Any]]) -> str:
    """The text `lancens.list_tags` prints."""
    lines = [f"  {row['tag']} -> version {row['version']} (tagged {row['created_at']})" for row in rows]
    return f"tags of {_name(table_id)}:\n" + ("\n".join(lines) if lines else "  (none)")


def _name(table_id: list[str]) -> str:
    return ".".join(table_id)

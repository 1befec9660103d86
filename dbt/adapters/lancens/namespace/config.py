"""Namespace configuration: property parsing, root normalisation, storage-option mapping.

Properties arrive as strings (dbt profiles, Spark worker round trips), so booleans are parsed from
native pylance's spellings. Where native silently ignores a property it does not know or a boolean
it cannot parse (and runs with the default), this engine raises InvalidInput (13) naming it: a
misspelt ``manifest_enabled`` must not quietly select another on-disk layout.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urlparse

from dbt.adapters.lancens.namespace import errors
from dbt.adapters.lancens.text.yes_no import yes_or_no

STORAGE_PREFIX = "storage."


KNOWN_PROPERTIES = (
    "root",
    "manifest_enabled",
    "dir_listing_enabled",
    "catalog_cache_dir",
    "allow_foreign_root",
)


def parse_bool(value: object, name: str) -> bool:
    """A boolean property (native's spellings, any case: ``text/yes_no.py``); anything else is 13."""
    parsed = yes_or_no(value)
    if parsed is None:
        raise errors.InvalidInputError(f"property {name!r} must be true or false, got {value!r}")
    return parsed


def root_scheme(root: str) -> str:
    """The scheme of a root or location (``s3``, ``memory``, ...); ``file`` for a plain path."""
    return root.split("://", 1)[0] if "://" in root else "file"


def normalize_root(root: str | os.PathLike[str]) -> str:
    """Return an absolute local path (``file://`` unwrapped) or a URI without a trailing slash."""
    if not isinstance(root, str | os.PathLike):
        raise errors.InvalidInputError(f"root must be a path or URI string, got {root!r}")
    text = os.fspath(root)
    if not isinstance(text, str) or not text:
        raise errors.InvalidInputError("root must not be empty")
    if "://" in text:
        parsed = urlparse(text)
        if parsed.scheme == "file":
            return os.path.abspath(unquote(parsed.path))
        stripped = text.rstrip("/")
        return text if stripped.endswith(":") else stripped
    return os.path.abspath(text)


@dataclass(frozen=True)
class NamespaceConfig:
    root: str
    manifest_enabled: bool = True
    dir_listing_enabled: bool = True
    storage_options: dict[str, str] = field(default_factory=dict)
    catalog_cache_dir: str | None = None
    """A local directory where ``__manifest``'s fragments are cached between processes
    (``fragment_cache``); None: every new process reads the catalog from the root."""
    allow_foreign_root: bool = False
    """Whether the root's first ``__manifest`` may be written among entries that are no table
    directory (``ownership.refuse_foreign_root``): off, such a root is refused."""

    @classmethod
    def from_properties(cls, properties: Mapping[str, object]) -> NamespaceConfig:
        """Parse string properties; ``storage.*`` keys lose their prefix; an unknown key is 13."""
        if not isinstance(properties, Mapping):
            raise errors.InvalidInputError(f"properties must be a mapping, got {properties!r}")
        unknown = sorted(
            str(key)
            for key in properties
            if not isinstance(key, str)
            or (key not in KNOWN_PROPERTIES and not key.startswith(STORAGE_PREFIX))
        )
        if unknown:
            raise errors.InvalidInputError(
                f"unknown properties {unknown} (known: {', '.join(KNOWN_PROPERTIES)}, {STORAGE_PREFIX}*)"
            )
        if "root" not in properties or properties["root"] in (None, ""):
            raise errors.InvalidInputError("missing required property 'root'")
        storage = {
            key[len(STORAGE_PREFIX) :]: str(value)
            for key, value in properties.items()
            if key.startswith(STORAGE_PREFIX)
        }
        return cls(
            root=normalize_root(str(properties["root"])),
            manifest_enabled=parse_bool(properties.get("manifest_enabled", "true"), "manifest_enabled"),
            dir_listing_enabled=parse_bool(
                properties.get("dir_listing_enabled", "true"), "dir_listing_enabled"
            ),
            storage_options=storage,
            catalog_cache_dir=str(cache) if (cache := properties.get("catalog_cache_dir")) else None,
            allow_foreign_root=parse_bool(
                properties.get("allow_foreign_root", "false"), "allow_foreign_root"
            ),
        )

    def to_properties(self) -> dict[str, str]:
        props = {
            "root": self.root,
            "manifest_enabled": str(self.manifest_enabled).lower(),
            "dir_listing_enabled": str(self.dir_listing_enabled).lower(),
        }
        if self.catalog_cache_dir is not None:
            props["catalog_cache_dir"] = self.catalog_cache_dir
        if self.allow_foreign_root:
            props["allow_foreign_root"] = "true"
        props.update({STORAGE_PREFIX + key: value for key, value in self.storage_options.items()})
        return props


def s3fs_kwargs(options: Mapping[str, str]) -> dict[str, object]:
    """Map Lance/object_store S3 option names onto s3fs arguments so both see the same bucket."""
    lookup = {key.lower(): value for key, value in options.items()}

    def first(*names: str) -> str | None:
        return next((lookup[n] for n in names if n in lookup), None)

    kwargs: dict[str, object] = {}
    client: dict[str, str] = {}
    if key := first("access_key_id", "aws_access_key_id"):
        kwargs["key"] = key
    if secret := first("secret_access_key", "aws_secret_access_key"):
        kwargs["secret"] = secret
    if token := first("session_token", "aws_session_token", "token"):
        kwargs["token"] = token
    if endpoint := first("endpoint", "aws_endpoint", "endpoint_url", "aws_endpoint_url"):
        client["endpoint_url"] = endpoint
    if region := first("region", "aws_region"):
        client["region_name"] = region
    if client:
        kwargs["client_kwargs"] = client
    if parse_bool(first("skip_signature", "aws_skip_signature") or "false", "storage.skip_signature"):
        kwargs["anon"] = True
    return kwargs

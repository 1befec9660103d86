"""The `lancens` profile: where the namespace lives and how Spark runs."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dbt.adapters.contracts.connection import Credentials
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lancens.definitions.names import schema_to_namespace
from dbt.adapters.lancens.namespace.config import root_scheme
from dbt.adapters.lancens.text.yes_no import yes_or_no

# Storage option keys whose values must never be shown (dbt debug, logs, errors).
SECRET_OPTION_MARKERS = ("secret", "key", "token", "password", "session", "credential")


def is_secret_option(name: str) -> bool:
    """True for option names that may carry a credential (matched loosely: better redact too much)."""
    lowered = name.lower()
    return any(marker in lowered for marker in SECRET_OPTION_MARKERS) and lowered not in {
        "key_id_alias",
    }


def redact_secrets(text: str, storage_options: Mapping[str, str], remote: str | None = None) -> str:
    """`text` with the value of every secret storage option, and the token of the Spark Connect URL
    `remote`, replaced by `****`.

    Error messages from s3fs, Lance or Spark may echo a request, an option map or the server's URL;
    whatever reaches a dbt log, artifact or terminal goes through here first."""
    secrets = [value for name, value in storage_options.items() if value and is_secret_option(name)]
    secrets += connect_url_secrets(remote or "")
    for secret in secrets:
        text = text.replace(secret, "****")
    return text


# A Spark Connect URL's parameters (`sc://host:port/;token=...;use_ssl=true`): name, value.
_URL_PARAM = re.compile(r"(;\s*([^;=]+?)\s*=)([^;]*)")


def connect_url_secrets(url: str) -> list[str]:
    """The credential values in a Spark Connect URL: its parameters named as `is_secret_option` says."""
    return [m.group(3) for m in _URL_PARAM.finditer(url) if m.group(3) and is_secret_option(m.group(2))]


def redact_connect_url(url: str) -> str:
    """The URL as it may be shown: every credential parameter's value replaced by `****`."""
    return _URL_PARAM.sub(lambda m: m.group(1) + "****" if is_secret_option(m.group(2)) else m.group(0), url)


def user_cache_dir() -> str:
    """dbt-lancens's directory in the user's cache: `DBT_LANCENS_CACHE_DIR`, else under
    `XDG_CACHE_HOME` (default `~/.cache`)."""
    explicit = os.environ.get("DBT_LANCENS_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "dbt-lancens")


@dataclass
class LancensCredentials(Credentials):
    """Profile keys (see the README's profile table).

    `database` is not a Lance concept: a namespace root is the whole warehouse. It is always the root
    directory's name (a profile may leave it out or spell it so); relations carry it, as dbt's
    relation cache and catalog expect, and never render it in SQL.
    """

    root: str = ""
    schema: str = ""  # type: ignore[assignment]
    database: str | None = None  # type: ignore[assignment]
    manifest_enabled: bool = True
    dir_listing_enabled: bool = True
    table_version_management: bool = False
    atomic_publish: bool = False
    # A Lance branch every write of the run lands on (created per table at its first write; promoted
    # to main with `lancens.promote_branch`): runtime/branch_landing.py.
    branch: str | None = None
    storage_options: dict[str, str] = field(default_factory=dict)
    master: str = "local[*]"
    # A Spark Connect URL (`sc://host:port/;token=...`): the dbt process is a client of that server.
    remote: str | None = None
    spark_config: dict[str, str] = field(default_factory=dict)
    # How Spark reads Lance tables: auto, jvm or python (runtime/connector_choice.py; unset: auto).
    spark_connector: str | None = None
    # True: the connector's jars are already on the class path of the cluster's nodes or of the Spark
    # Connect server (docs/jvm-connector.md); the adapter then adds none and uses theirs.
    connector_jars_on_nodes: bool = False
    # Where `__manifest`'s fragments are cached between runs: a path, true (the user's cache
    # directory) or false; unset: the user's cache directory for object-store roots, off for local.
    catalog_cache: str | bool | None = None
    # True: a root that already holds other files may become a namespace (`namespace/ownership.py`).
    allow_foreign_root: bool = False

    @classmethod
    def __pre_deserialize__(cls, data: Any) -> Any:
        data = super().__pre_deserialize__(data)
        data.setdefault("database", None)
        if data.get("remote") and data.get("master"):
            raise DbtRuntimeError(
                "lancens profile: `master` and `remote` are both set; `master` starts Spark inside the "
                "dbt process and `remote` makes dbt a client of a Spark Connect server: keep one"
            )
        return data

    def __post_init__(self) -> None:
        if not self.root:
            raise DbtRuntimeError(
                "lancens profile: `root` is required (a path or a URI such as s3://bucket/prefix)"
            )
        if not self.schema:
            raise DbtRuntimeError(
                "lancens profile: `schema` is required (the default namespace, e.g. analytics)"
            )
        schema_to_namespace(self.schema)  # raises a clear error for a bad schema name
        if self.database not in (None, "", self.root_name):
            raise DbtRuntimeError(
                "lancens profile: `database` is not used by dbt-lancens (the namespace root is the whole "
                f"warehouse); remove it or set it to the root's name {self.root_name!r}, "
                f"got {self.database!r}"
            )
        if self.remote is not None and not self.remote.startswith("sc://"):
            raise DbtRuntimeError(
                "lancens profile: `remote` is a Spark Connect URL such as sc://host:15002, got "
                f"{redact_connect_url(self.remote)!r}"
            )
        self.database = self.root_name
        self.storage_options = {str(k): str(v) for k, v in (self.storage_options or {}).items()}
        self.spark_config = {str(k): str(v) for k, v in (self.spark_config or {}).items()}

    @property
    def root_name(self) -> str:
        return os.path.basename(self.root.rstrip("/")) or self.root

    @property
    def type(self) -> str:
        return "lancens"

    @property
    def unique_field(self) -> str:
        return self.root

    def _connection_keys(self) -> tuple[str, ...]:
        # storage_options is left out on purpose: it may hold credentials. A Connect client starts no
        # local Spark, so `master` (its default) would only mislead; `dbt debug` names the server.
        keys = (
            "root",
            "database",
            "schema",
            "manifest_enabled",
            "dir_listing_enabled",
            "table_version_management",
            "atomic_publish",
        )
        return keys if self.remote else (*keys, "master")

    def namespace_properties(self, project_root: str | None = None) -> dict[str, str]:
        """Properties for `DirectoryNamespace.from_properties`; a relative root is relative to the project."""
        root = self.root
        if "://" not in root and not os.path.isabs(root):
            root = os.path.abspath(os.path.join(project_root or os.getcwd(), root))
        properties = {
            "root": root,
            "manifest_enabled": str(self.manifest_enabled).lower(),
            "dir_listing_enabled": str(self.dir_listing_enabled).lower(),
        }
        if self.allow_foreign_root:
            properties["allow_foreign_root"] = "true"
        cache = self.catalog_cache_dir(project_root)
        if cache is not None:
            properties["catalog_cache_dir"] = cache
        properties.update({f"storage.{k}": v for k, v in self.storage_options.items()})
        return properties

    def catalog_cache_dir(self, project_root: str | None = None) -> str | None:
        """The directory of the catalog cache (`namespace/fragment_cache.py`), or None for none.

        On by default only for object-store roots: there it saves a run the requests of reading
        the catalog (which grow with it); a local root reads its catalog as fast as the cache."""
        if self.catalog_cache is None:
            on = root_scheme(self.root) not in ("file", "memory")
        else:
            switch = yes_or_no(self.catalog_cache)
            if switch is None:  # a directory of the profile's own
                path = os.path.expanduser(str(self.catalog_cache))
                return os.path.abspath(os.path.join(project_root or os.getcwd(), path))
            on = switch
        return os.path.join(user_cache_dir(), "catalog") if on else None

    def redact(self, text: str) -> str:
        """`text` without this profile's secrets (storage options, the Connect URL's token)."""
        return redact_secrets(text, self.storage_options, self.remote)

    def redacted_storage_options(self) -> dict[str, str]:
        return {k: ("****" if is_secret_option(k) else v) for k, v in self.storage_options.items()}

"""What `dbt debug` reports for a lancens target: root, mode, Spark, and whether the root is usable.

`dbt debug` is where a user finds out that a root is mistyped, points at a file, or is read-only,
so every check here fails with a message naming the root and what to fix, before any model runs.
Nothing is left behind: the writability probe is one uniquely named object, deleted right away.
Secrets never reach the report: storage options are shown redacted and errors are scrubbed.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.lancens.definitions.credentials import LancensCredentials, redact_secrets
from dbt.adapters.lancens.namespace.storage import filesystem_for
from dbt.adapters.lancens.runtime.process import LancensRuntime

PROBE_PREFIX = ".lancens-debug-probe-"


def report(runtime: LancensRuntime, credentials: LancensCredentials) -> list[str]:
    """Run the checks and return the lines to show; raise DbtRuntimeError naming the first failure."""
    runtime.sql("select 1 as id").collect()
    namespace = runtime.namespace
    lines = [
        f"lancens root: {namespace.root}",
        f"lancens mode: manifest_enabled={namespace.manifest_enabled}, "
        f"dir_listing_enabled={namespace.dir_listing_enabled}, "
        f"table_version_management={credentials.table_version_management}, "
        f"atomic_publish={credentials.atomic_publish}",
        f"lancens storage_options: {credentials.redacted_storage_options()}",
        *runtime.backend.describe(runtime.spark),
        runtime.connector.describe(),
        f"lancens root: {probe_root(namespace.root, namespace.storage_options)}",
    ]
    if credentials.branch is not None:  # a branch target: main never changes before a promotion
        lines.append(
            f"lancens branch: {credentials.branch} (every write lands on this branch of its table; "
            "lancens.promote_branch makes it main's)"
        )
    return lines


def probe_root(root: str, storage_options: Mapping[str, str]) -> str:
    """Check that `root` is reachable and writable by creating and deleting one probe object.

    A local root that does not exist yet is fine (the first write creates it) when its nearest
    existing ancestor is a writable directory; a root that is a file is not.
    """
    fs = filesystem_for(root, storage_options)
    local = "://" not in root
    target = root
    note = "reachable and writable"
    try:
        if local:
            while not os.path.exists(target):
                parent = os.path.dirname(target.rstrip(os.sep)) or os.sep
                if parent == target:
                    break
                target = parent
            if not os.path.isdir(target):
                raise DbtRuntimeError(
                    f"lancens root {root!r} is not usable: {target!r} is a file, not a directory "
                    "(point `root` at a directory, or at a path that does not exist yet)"
                )
            if target != root:
                note = f"does not exist yet (the first write creates it); {target!r} is writable"
        elif fs.exists(target) and fs.isfile(target):
            raise DbtRuntimeError(f"lancens root {root!r} is not usable: it is an object, not a prefix")
        probe = "/".join([target.rstrip("/"), f"{PROBE_PREFIX}{uuid.uuid4().hex}"])
        fs.pipe_file(fs._strip_protocol(probe), b"probe")
        fs.rm(fs._strip_protocol(probe))
    except DbtRuntimeError:
        raise
    except Exception as exc:
        reason = redact_secrets(f"{type(exc).__name__}: {exc}", storage_options)
        raise DbtRuntimeError(f"lancens root {root!r} is not writable: {reason}") from exc
    return note

"""The PEP 517 build backend: setuptools, plus a plugin marker in editable wheels.

dbt-core finds adapter plugins (`dbt --version`, `dbt init`) by globbing
`dbt/adapters/*/__version__.py` in the directories of the `dbt.adapters` package spec, which is
site-packages only. In an editable install (`pip install -e .`) setuptools serves
`dbt.adapters.lancens` from the source tree through an import hook, so that glob finds nothing
(dbt-core issue 8504, closed as won't fix). The editable wheel therefore also carries
`dbt/adapters/lancens/__version__.py` for site-packages. Imports still come from the source tree:
that site-packages directory has no `__init__.py`, and Python's path finder prefers the regular
package it finds next, in the source tree. Regular wheels and sdists are setuptools' own.

Editable and regular wheels first build the JVM connector into the package (`connector_build.py`).
"""

from __future__ import annotations

import base64
import hashlib
import os
import zipfile
from pathlib import Path

from connector_build import build_connector
from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 - every other hook is setuptools' own

MARKER = "dbt/adapters/lancens/__version__.py"
_PROJECT_ROOT = Path(__file__).resolve().parents[1]


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, object] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """setuptools' editable wheel, with the plugin marker added (and listed in its RECORD)."""
    build_connector(_PROJECT_ROOT)
    name = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    add_file(os.path.join(wheel_directory, name), MARKER, (_PROJECT_ROOT / MARKER).read_bytes())
    return name


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, object] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """setuptools' wheel, carrying the connector jar and its class path file (package data)."""
    build_connector(_PROJECT_ROOT)
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def add_file(wheel_path: str, archive_name: str, content: bytes) -> None:
    """Rewrite the wheel with one more file, recorded in `*.dist-info/RECORD` with its hash."""
    with zipfile.ZipFile(wheel_path) as wheel:
        entries = [(info, wheel.read(info)) for info in wheel.infolist()]
    digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
    line = f"{archive_name},sha256={digest},{len(content)}\n".encode()
    with zipfile.ZipFile(wheel_path, "w", zipfile.ZIP_DEFLATED) as wheel:
        wheel.writestr(archive_name, content)
        for info, data in entries:
            if info.filename.endswith(".dist-info/RECORD"):
                data = line + data
            wheel.writestr(info, data)

"""A local Spark Connect server for the tests that run dbt as a Spark Connect client.

One server per test session (per xdist worker), started on first use: the JVM of PySpark's own
`SparkConnectServer` on 127.0.0.1 and a free port, requiring a bearer token (so every test also
proves the token is sent and kept secret). Its Python workers run this test interpreter, which has
dbt-lancens installed. The server is stopped, JVM included, when the session ends however the
tests went.

The pytest process itself never opens a Connect session: PySpark switches a whole process to
Connect mode (`SPARK_CONNECT_MODE_ENABLED`), which would break the local SparkSession other tests of
the same worker use. Clients of the server run in child processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.connect.server import ConnectServer, start_connect_server

PROJECT_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectServer]:
    """The session's Spark Connect server (dbt-lancens importable by its Python workers)."""
    with start_connect_server(tmp_path_factory.mktemp("connect-server"), python=sys.executable) as server:
        yield server


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Python that has PySpark, pyarrow and pandas but not dbt-lancens (a server set up without it).

    A new virtualenv whose `.pth` file adds this interpreter's site-packages as a plain path: the
    packages there import, but the `.pth` files inside it (dbt-lancens' editable-install finder)
    are not processed, so `import dbt.adapters.lancens` fails as on a server without the package."""
    venv = tmp_path_factory.mktemp("bare-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    own_site = next(p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p))
    bare_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(bare_site, "parent_site.pth").write_text(own_site + "\n")
    return str(python)


@pytest.fixture(scope="session")
def bare_connect_server(
    tmp_path_factory: pytest.TempPathFactory, bare_python: str
) -> Iterator[ConnectServer]:
    """A Spark Connect server whose Python workers cannot import dbt-lancens."""
    with start_connect_server(tmp_path_factory.mktemp("bare-connect-server"), python=bare_python) as server:
        yield server

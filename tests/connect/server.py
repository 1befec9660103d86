"""Start and stop PySpark's own Spark Connect server as a child process (tests only)."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pyspark.find_spark_home import _find_spark_home

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
START_TIMEOUT_S = 180.0


@dataclass(frozen=True)
class ConnectServer:
    """A running server: where it listens, the token it requires, and its JVM's log."""

    port: int
    token: str
    log: Path

    @property
    def url(self) -> str:
        """The profile's `remote` URL. `localhost`: PySpark sends a token without TLS only there."""
        return f"sc://localhost:{self.port}/;token={self.token}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def start_connect_server(
    workdir: Path,
    python: str,
    port: int | None = None,
    token: str | None = None,
    connector_jars: bool = True,
) -> Iterator[ConnectServer]:
    """Run a Spark Connect server whose Python workers use `python`, until the block ends (on
    `port` with `token` when given: a server restarted where clients know it). Its JVM has the
    JVM connector's jars on its class path (SPARK_DIST_CLASSPATH) unless `connector_jars` is False.

    `spark-submit` execs the JVM, which runs in its own process group: stopping the group ends the
    JVM whether the tests passed, failed or were interrupted; its Python worker daemons exit when
    the JVM's end of their pipe closes."""
    spark_home = _find_spark_home()
    port = port or _free_port()
    token = token or secrets.token_hex(16)
    log = workdir / "connect-server.log"
    env = {
        **os.environ,
        "SPARK_HOME": spark_home,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": python,
        "PYSPARK_DRIVER_PYTHON": python,
        # The token travels in the environment, not on the command line (`ps` shows that).
        "SPARK_CONNECT_AUTHENTICATE_TOKEN": token,
    }
    env.pop("PYTHONPATH", None)  # the workers import what `python` has installed, nothing more
    env.pop("SPARK_CONNECT_MODE_ENABLED", None)
    if not connector_jars:  # a server set up without the JVM connector (tests/conftest.py adds it)
        env["SPARK_DIST_CLASSPATH"] = ""
    settings = {
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.sql.catalogImplementation": "in-memory",
        "spark.sql.warehouse.dir": str(workdir / "warehouse"),
        "spark.pyspark.python": python,
    }
    command = [os.path.join(spark_home, "bin", "spark-submit"), "--master", "local[2]"]
    command += ["--class", SERVER_CLASS]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    command.append("spark-internal")
    with open(log, "wb") as out:
        process = subprocess.Popen(
            command, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _listening(port):
            if process.poll() is not None:
                raise RuntimeError(f"the Spark Connect server exited ({process.returncode}); see {log}")
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the Spark Connect server did not listen in {START_TIMEOUT_S}s; see {log}"
                )
            time.sleep(0.5)
        yield ConnectServer(port=port, token=token, log=log)
    finally:
        _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server's process group, then SIGKILL what is left after a grace period."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    try:  # anything else left in the group (spark-submit's shell, if it did not exec)
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class Relay:
    """A TCP relay on 127.0.0.1 to the Spark Connect server on the port last given to `switch`: a
    client of the relay sees one address whose server restarts, while the next server was started
    beforehand and answers at once (a client that lost its server backs off for a minute between
    its late retries; a server started after the loss is met by one of those). Bytes are passed on
    as they are; a connection ends when either side ends it."""

    def __init__(self) -> None:
        self.target: int | None = None
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        threading.Thread(target=self._accept, daemon=True).start()

    def switch(self, target: int) -> None:
        """Connections from now on reach the server on `target`; open ones stay with theirs."""
        self.target = target

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            try:
                if self.target is None:
                    raise ConnectionRefusedError
                upstream = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()  # no server there: the client sees a refused connection, as without a relay
                continue
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(source, sink), daemon=True).start()

    def __enter__(self) -> Relay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:  # one side ended: end both, so the other side's peer sees it too
        for end in (source, sink):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            end.close()

"""S3's `409 ConditionalRequestConflict` on a conditional create (AWS answers it while another
conditional write of the same key is in progress): the engine asks again, so a reservation or a
version file is either created or found taken, never failed with an error that says neither.

moto never answers 409 by itself, so the server here is moto's real HTTP server behind a WSGI layer
that answers the first conditional PUTs of a key with AWS's 409 body, as a racing write would."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from moto.moto_server.threaded_moto_server import MotoRequestHandler, ThreadedMotoServer
from moto.server import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import make_server

from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.conftest import free_port, serve_s3

CONFLICT = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>ConditionalRequestConflict</Code>'
    b"<Message>A conflicting conditional operation is currently in progress against this "
    b"resource. Please try again.</Message></Error>"
)


class ConflictingServer(ThreadedMotoServer):
    """moto's S3 server; the next `conflicts` conditional PUTs of the engine's own files are
    answered 409 instead. Lance's own manifest PUTs pass: Lance reads a 409 as a lost commit race
    (another writer is writing that version), which its conflict handling already covers."""

    def __init__(self, port: int) -> None:
        super().__init__(ip_address="127.0.0.1", port=port, verbose=False)
        self.conflicts = 0
        self.answered: list[int] = []
        self._lock = threading.Lock()

    def _conflicting(self, app: Callable[..., Any]) -> Callable[..., Any]:
        def serve(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
            conditional = (
                environ.get("REQUEST_METHOD") == "PUT"
                and environ.get("HTTP_IF_NONE_MATCH") == "*"
                and "/_versions/" not in environ.get("PATH_INFO", "")
            )
            with self._lock:
                refuse = conditional and self.conflicts > 0
                if refuse:
                    self.conflicts -= 1
                if conditional:
                    self.answered.append(409 if refuse else 0)
            if refuse:
                environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
                start_response("409 Conflict", [("Content-Type", "application/xml")])
                return [CONFLICT]
            return app(environ, start_response)

        return serve

    def _server_entry(self) -> None:
        app = self._conflicting(DomainDispatcherApplication(create_backend_app))
        handler = MotoRequestHandler
        self._server = make_server(self._ip_address, self._port, app, True, request_handler=handler)
        self._server_ready_event.set()
        self._server.serve_forever()


@pytest.fixture(scope="module")
def conflicting_s3() -> Iterator[tuple[ConflictingServer, dict[str, str]]]:
    port = free_port()
    server = ConflictingServer(port)
    for endpoint in serve_s3(server, port, "conflicts"):
        yield server, endpoint.storage_options


def test_a_conflict_is_asked_again_until_created(conflicting_s3):
    server, options = conflicting_s3
    ns = DirectoryNamespace("s3://conflicts/created", storage_options=options)
    path = ns.root + "/x/marker"
    server.answered.clear()
    server.conflicts = 2
    ns._context.fs.put_if_not_exists(path, b"one")
    assert server.answered == [409, 409, 0]
    assert ns._context.fs.read_bytes(path) == b"one"


def test_a_conflict_then_a_taken_key_is_file_exists(conflicting_s3):
    server, options = conflicting_s3
    ns = DirectoryNamespace("s3://conflicts/taken", storage_options=options)
    path = ns.root + "/x/marker"
    ns._context.fs.put_if_not_exists(path, b"one")
    server.conflicts = 1
    with pytest.raises(FileExistsError):
        ns._context.fs.put_if_not_exists(path, b"two")
    assert ns._context.fs.read_bytes(path) == b"one"


def test_a_lasting_conflict_names_the_key_and_writes_nothing(conflicting_s3):
    server, options = conflicting_s3
    ns = DirectoryNamespace("s3://conflicts/lasting", storage_options=options)
    path = ns.root + "/x/marker"
    server.conflicts = 100
    try:
        lasting = r"x/marker: S3 kept answering ConditionalRequestConflict"
        with pytest.raises(OSError, match=lasting) as raised:
            ns._context.fs.put_if_not_exists(path, b"one")
    finally:
        server.conflicts = 0
    assert not isinstance(raised.value, FileExistsError)
    assert not ns._context.fs.exists(path)


def test_a_branch_is_created_through_conflicts(conflicting_s3):
    """A table branch's creation claims its name with a conditional create of the engine's own
    (namespace/branches.py); through the conflicts it is asked again and the branch is made once."""
    import lance
    import pyarrow as pa

    server, options = conflicting_s3
    ns = DirectoryNamespace("s3://conflicts/branches", storage_options=options)
    ns.create_namespace(["a"])
    ns.create_table(["a", "t"], pa.table({"id": [1, 2]}))
    server.answered.clear()
    server.conflicts = 3
    ns.create_table_branch(["a", "t"], "dev")
    assert server.answered[:4] == [409, 409, 409, 0]
    assert [branch.name for branch in ns.list_table_branches(["a", "t"]).items] == ["dev"]
    location = ns.table_location(["a", "t"])
    assert "dev" in lance.dataset(location, storage_options=options).branches.list()

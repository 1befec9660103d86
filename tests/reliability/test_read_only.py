"""A truly read-only root: an S3 prefix whose credentials may read but not write.

The tests run as root, for whom `chmod` makes nothing read-only, so the root lives in its own moto
server process with IAM authentication switched on (`INITIAL_NO_AUTH_ACTION_COUNT`: the first
requests, which create the bucket and the users, go unauthenticated; every later one is signed and
checked against the user's policy). An admin user (`s3:*`) seeds a namespace with a table; the
reader user (`s3:GetObject`, `s3:ListBucket` only) runs dbt. The test first proves the server
enforces the policy (the reader's own PUT is AccessDenied), then that `dbt run` fails with an error
naming the problem, `dbt debug` reports the root not writable, and not one object under the root
changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import boto3
import botocore.config
import pyarrow as pa
import pytest
from botocore.exceptions import ClientError

from dbt.adapters.lancens.namespace import DirectoryNamespace
from tests.conftest import free_port
from tests.reliability.helpers import check_namespace, make_project, namespace_properties

BUCKET = "lancens-read-only"
PREFIX = "warehouse"
# Unauthenticated set-up requests: CreateBucket, then CreateUser, PutUserPolicy, CreateAccessKey for
# each of the two users. Authentication is enforced from the next request on.
SETUP_REQUESTS = 7
# What a read-only user may do: read objects and list the bucket. moto 5.2 authorises a ListObjectsV2
# call by an action of that name where AWS asks for s3:ListBucket, so both are named (no write action).
READER_ACTIONS = ["s3:GetObject", "s3:ListBucket", "s3:ListObjectsV2"]
ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64())})


def _client(service: str, endpoint: str, key: str, secret: str):
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id=key,
        aws_secret_access_key=secret,
        config=botocore.config.Config(retries={"max_attempts": 1}),
    )


@dataclass(frozen=True)
class ReadOnlyStore:
    """The server, and the storage options of its two users (the profile's `storage_options`)."""

    endpoint: str
    admin: dict[str, str]
    reader: dict[str, str]

    def s3(self, options: dict[str, str]):
        return _client("s3", self.endpoint, options["access_key_id"], options["secret_access_key"])


def _wait_listening(port: int, server: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            assert server.poll() is None, f"moto server exited with {server.returncode}"
            assert time.monotonic() < deadline, "moto server did not start listening"
            time.sleep(0.05)


def _user(iam, name: str, actions: list[str]) -> tuple[str, str]:
    """An IAM user allowed exactly `actions` on every resource; returns its access key pair."""
    iam.create_user(UserName=name)
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}
    iam.put_user_policy(UserName=name, PolicyName=f"{name}-policy", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName=name)["AccessKey"]
    return key["AccessKeyId"], key["SecretAccessKey"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReadOnlyStore]:
    """A moto server of its own (not the shared `s3_server`) that enforces IAM after the set-up."""
    port = free_port()
    log = open(tmp_path_factory.mktemp("moto") / "moto.log", "w")  # noqa: SIM115 - closed below
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        env={**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": str(SETUP_REQUESTS)},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_listening(port, server)
        endpoint = f"http://127.0.0.1:{port}"
        _client("s3", endpoint, "setup", "setup").create_bucket(Bucket=BUCKET)
        iam = _client("iam", endpoint, "setup", "setup")
        admin_key, admin_secret = _user(iam, "lancens-admin", ["s3:*"])
        reader_key, reader_secret = _user(iam, "lancens-reader", READER_ACTIONS)
        common = {"endpoint": endpoint, "region": "us-east-1", "allow_http": "true"}
        yield ReadOnlyStore(
            endpoint,
            admin={**common, "access_key_id": admin_key, "secret_access_key": admin_secret},
            reader={**common, "access_key_id": reader_key, "secret_access_key": reader_secret},
        )
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def objects(store: ReadOnlyStore) -> dict[str, str]:
    """Every object in the bucket with the SHA-256 of its content (read with the admin's keys)."""
    client = store.s3(store.admin)
    found: dict[str, str] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        for item in page.get("Contents", []):
            body = client.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read()
            found[item["Key"]] = hashlib.sha256(body).hexdigest()
    return found


def test_read_only_root_fails_clearly_and_changes_nothing(store: ReadOnlyStore, tmp_path: Path) -> None:
    root = f"s3://{BUCKET}/{PREFIX}"
    admin_ns = DirectoryNamespace.from_properties(namespace_properties(root, store.admin))
    admin_ns.create_namespace(["analytics"])
    admin_ns.create_table(["analytics", "existing"], ROWS)

    # The server really enforces the policy: the reader reads, but its writes are refused.
    reader = store.s3(store.reader)
    reader.list_objects_v2(Bucket=BUCKET, Prefix=PREFIX)
    with pytest.raises(ClientError) as denied:
        reader.put_object(Bucket=BUCKET, Key=f"{PREFIX}/probe", Body=b"x")
    assert denied.value.response["Error"]["Code"] == "AccessDenied"
    with pytest.raises(ClientError) as unknown:
        store.s3({"access_key_id": "nobody", "secret_access_key": "nobody"}).list_objects_v2(Bucket=BUCKET)
    assert unknown.value.response["Error"]["Code"] == "InvalidAccessKeyId"

    before = objects(store)
    assert any(key.startswith(f"{PREFIX}/__manifest/") for key in before)

    project = make_project(tmp_path / "proj", root, store.reader, sample=False)
    project.write("models/existing.sql", "select id from range(5)")  # a new version of a table
    project.write("models/brand_new.sql", "select 1 as id")  # a new table
    run = project.run("run")
    assert run.returncode == 1, run.output[-3000:]
    for name in ("existing", "brand_new"):
        result = run.results[name]
        assert result["status"] == "error", (name, result)
        message = result["message"]
        assert f"permission denied under the namespace root '{root}'" in message, message
        assert "s3:PutObject" in message and "Storage error:" in message, message
        assert "Traceback" not in message, message
        assert store.reader["secret_access_key"] not in message
    # Lance's PUT in the Spark task, refused (its text names the S3 code or the HTTP status)
    assert any(refusal in run.results["existing"]["message"] for refusal in ("AccessDenied", "403 Forbidden"))
    assert "PermissionError: Access Denied" in run.results["brand_new"]["message"]  # the declaration

    debug = project.run("debug")
    assert debug.returncode == 1, debug.output[-3000:]
    # the probe's PUT refused (botocore's text says "Access Denied" or "Forbidden" by version)
    assert f"lancens root '{root}' is not writable: PermissionError: " in debug.output
    assert store.reader["secret_access_key"] not in run.output + debug.output

    assert objects(store) == before  # not one object added, removed or changed
    # read back with the admin's keys: moto 5.2 answers the reader's HEAD of a missing manifest (Lance's
    # look for a newer version) with 403, where S3 gives a reader allowed s3:ListBucket a 404
    after = DirectoryNamespace.from_properties(namespace_properties(root, store.admin))
    assert check_namespace(after) == {("analytics", "existing"): 3}

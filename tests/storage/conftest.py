"""A real S3-protocol server on 127.0.0.1 (moto's server mode) for the storage tests."""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any, NamedTuple

import boto3
import pytest
from moto.server import ThreadedMotoServer

# Recognisable values so the tests can prove they never reach a log line or an error message.
ACCESS_KEY_ID = "AKIAASCENDIFYTEST0001"
SECRET_ACCESS_KEY = "s3cr3t-ascendify-storage-test-value"
REGION = "us-east-1"


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(scope="session")
def s3(s3_endpoint: str) -> Any:
    """A boto3 client: the independent view of what is in the store."""
    return boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_access_key=SECRET_ACCESS_KEY,
        region_name=REGION,
    )


@pytest.fixture
def s3_env(s3_endpoint: str) -> dict[str, str]:
    """The environment a job sees: endpoint and credentials the usual way."""
    return {
        "AWS_ENDPOINT_URL": s3_endpoint,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
        "AWS_DEFAULT_REGION": REGION,
    }


@pytest.fixture
def bucket(s3: Any) -> str:
    name = f"test-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=name)
    return name


def put_objects(s3: Any, bucket: str, objects: dict[str, bytes]) -> None:
    for key, body in objects.items():
        s3.put_object(Bucket=bucket, Key=key, Body=body)


def read_objects(s3: Any, bucket: str, prefix: str) -> dict[str, bytes]:
    """Every object under ``prefix`` by key relative to it."""
    listing = s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    return {
        item["Key"][len(prefix) :]: s3.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
        for item in listing
    }


class Restricted(NamedTuple):
    env: dict[str, str]
    allowed: str  # bucket the credentials may use
    forbidden: str  # bucket they may not


@pytest.fixture
def restricted(s3_endpoint: str, s3: Any, s3_env: dict[str, str]) -> Iterator[Restricted]:
    """Credentials of a user allowed on one bucket only, with authorization enforced."""
    allowed, forbidden = (f"{kind}-{uuid.uuid4().hex[:12]}" for kind in ("allowed", "forbidden"))
    for name in (allowed, forbidden):
        s3.create_bucket(Bucket=name)
        # At the bucket root: moto's signature check trips over "/" in a listing prefix.
        s3.put_object(Bucket=name, Key="file.txt", Body=b"for the allowed user only")
    statement = {
        "Effect": "Allow",
        "Action": "s3:*",
        "Resource": [f"arn:aws:s3:::{allowed}", f"arn:aws:s3:::{allowed}/*"],
    }
    with enforced_policy(s3_endpoint, s3_env, [statement]) as env:
        yield Restricted(env, allowed, forbidden)


@contextlib.contextmanager
def enforced_policy(
    s3_endpoint: str, s3_env: dict[str, str], statements: list[dict[str, Any]]
) -> Iterator[dict[str, str]]:
    """The environment of a new user whose rights are ``statements``, enforced for the block.

    moto checks IAM policies once its "no-auth action count" is reset to zero; this turns that on
    for the block and back off afterwards, so other tests keep the permissive server.
    """
    iam = boto3.client(
        "iam",
        endpoint_url=s3_endpoint,
        aws_access_key_id=ACCESS_KEY_ID,
        aws_secret_access_key=SECRET_ACCESS_KEY,
        region_name=REGION,
    )
    user = f"user-{uuid.uuid4().hex[:8]}"
    iam.create_user(UserName=user)
    policy = {"Version": "2012-10-17", "Statement": statements}
    iam.put_user_policy(UserName=user, PolicyName="only", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName=user)["AccessKey"]
    env = {
        **s3_env,
        "AWS_ACCESS_KEY_ID": key["AccessKeyId"],
        "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"],
    }
    _set_auth(s3_endpoint, "0")
    try:
        yield env
    finally:
        _set_auth(s3_endpoint, "inf")


def _set_auth(endpoint: str, count: str) -> None:
    request = urllib.request.Request(
        f"{endpoint}/moto-api/reset-auth",
        data=count.encode(),
        headers={"Content-Type": "text/plain"},  # a form body would be parsed away
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200


class SilentServer:
    """A TCP server on 127.0.0.1 that accepts every connection and never answers."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):  # the listener was closed
            while True:
                self._held.append(self._listener.accept()[0])

    def close(self) -> None:
        self._listener.close()
        for connection in self._held:
            connection.close()


@pytest.fixture
def silent_endpoint() -> Iterator[str]:
    server = SilentServer()
    yield f"http://127.0.0.1:{server.port}"
    server.close()


class SlowProxy:
    """A TCP proxy on 127.0.0.1 to ``target`` that passes the server's bytes on slowly
    (``rate`` bytes a second): a download through it stays in flight long enough to be stopped."""

    def __init__(self, target: tuple[str, int], rate: int) -> None:
        self._target = target
        self._chunk = max(1, rate // 20)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client = self._listener.accept()[0]
                server = socket.create_connection(self._target)
                for args in ((client, server, False), (server, client, True)):
                    threading.Thread(target=self._pump, args=args, daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, slow: bool) -> None:
        with contextlib.suppress(OSError):
            while not self._closed.is_set():
                data = source.recv(self._chunk if slow else 65536)
                if not data:
                    break
                sink.sendall(data)
                if slow:
                    self._closed.wait(0.05)
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._closed.set()
        self._listener.close()

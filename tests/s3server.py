"""A real S3 API server on 127.0.0.1 for the listing tests: moto's server application.

moto does not evaluate bucket policies for unsigned (anonymous) ListObjectsV2 requests — its
auth mode fails on a request without an Authorization header. ``PolicyGate`` fills that gap
the way S3 does: for an unsigned request to a bucket, it evaluates the bucket's policy with
moto's own IAM policy engine and, on an explicit Deny, answers S3's 403 AccessDenied XML.
Every other request, and every allowed one, is moto's.

Objects are created through moto's backend in this process (100,000 PUTs over HTTP take
about nine minutes on this machine; the backend takes four seconds); listing always goes
through the HTTP API.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterable
from typing import Any

ACCESS_DENIED = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>'
    "<Message>Access Denied</Message><RequestId>{rid}</RequestId><HostId>{hid}</HostId></Error>"
)


class PolicyGate:
    def __init__(self, app: Callable[..., Any], backend: Any) -> None:
        self.app = app
        self.backend = backend
        self.denied = 0

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        from moto.iam.access_control import PermissionResult

        signed = "HTTP_AUTHORIZATION" in environ or "X-Amz-Signature" in environ.get(
            "QUERY_STRING", ""
        )
        bucket_name = environ.get("PATH_INFO", "/").lstrip("/").split("/", 1)[0]
        if not signed and bucket_name and environ.get("REQUEST_METHOD") in ("GET", "HEAD"):
            bucket = self.backend.buckets.get(bucket_name)
            if bucket is not None and bucket.policy:
                key = environ["PATH_INFO"].lstrip("/")[len(bucket_name) + 1 :]
                action = "s3:GetObject" if key else "s3:ListBucket"
                arn = f"arn:aws:s3:::{bucket_name}" + (f"/{key}" if key else "")
                if bucket.get_permission(action, arn) == PermissionResult.DENIED:
                    self.denied += 1
                    rid, hid = uuid.uuid4().hex[:16].upper(), uuid.uuid4().hex
                    body = ACCESS_DENIED.format(rid=rid, hid=hid).encode()
                    start_response(
                        "403 Forbidden",
                        [
                            ("Content-Type", "application/xml"),
                            ("Content-Length", str(len(body))),
                            ("x-amz-request-id", rid),
                            ("x-amz-id-2", hid),
                        ],
                    )
                    return [body]
        return self.app(environ, start_response)


class S3Server:
    """moto's S3 application behind ``PolicyGate``, served by werkzeug on 127.0.0.1:<free port>."""

    def __init__(self) -> None:
        from moto.backends import get_backend
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import make_server

        self.backend = get_backend("s3")[DEFAULT_ACCOUNT_ID]["global"]
        self.gate = PolicyGate(DomainDispatcherApplication(create_backend_app), self.backend)
        self._server = make_server("127.0.0.1", 0, self.gate, threaded=True)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def create_bucket(self, name: str, objects: Iterable[tuple[str, bytes]] = ()) -> None:
        self.backend.create_bucket(name, "us-east-1")
        for key, data in objects:
            self.backend.put_object(name, key, data)

    def client(self) -> Any:
        """A signed boto3 client, for set-up steps that go through the API."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.url,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join(timeout=10)
        self._server.server_close()

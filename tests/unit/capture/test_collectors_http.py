"""The http collector against a real server on 127.0.0.1: what each exchange records."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import blake3
import httpx
import pytest

from provenance._testing.fixtures import Fixtures, Route
from provenance._testing.server import LocalServer, generated_body
from provenance.digest import Digest
from provenance.model import Capture
from provenance.store.objects import Store

ARTIFACT = "/marin/datakit/store_4d2e363d/.artifact.json"
Collect = Callable[..., Capture]


def http(name: str, url: str, **options: Any) -> dict[str, Any]:
    return {"name": name, "kind": "http", "url": url, **options}


def header(capture: Capture, name: str) -> list[str]:
    headers = capture.data["headers"]
    assert isinstance(headers, list)
    return [str(v) for k, v in headers if str(k).lower() == name.lower()]


def stored(tmp_path: Path, capture: Capture, name: str = "body") -> bytes:
    blob = next(b for b in capture.blobs if b.name == name)
    return Store(tmp_path / ".prov").read(Digest.parse(blob.digest))


def test_a_403_from_an_object_store_is_an_ok_observation_with_the_error_parsed(
    collect: Collect, marin_server: LocalServer, marin_fixtures: Fixtures, tmp_path: Path
) -> None:
    capture = collect(http("artifact", marin_server.url + ARTIFACT))

    assert capture.status == "ok" and capture.error is None
    data = capture.data
    assert (data["status"], data["reason"], data["method"]) == (403, "Forbidden", "GET")
    assert data["error_body"] == {
        "source": "body",
        "format": "xml",
        "code": "AccessDenied",
        "message": "Access Denied",
        "request_id": "4D2E363DTESTREQ1",
        "host_id": "dGVzdC1ob3N0LWlkLWZvci1wcm92",
    }
    route = next(r for r in marin_fixtures.routes if r.path == ARTIFACT)
    body = next(b for b in capture.blobs if b.name == "body")
    assert body.digest == f"blake3:{blake3.blake3(route.body).hexdigest()}"
    assert stored(tmp_path, capture) == route.body
    assert data["server_ip"] == "127.0.0.1" and data["tls"] is None
    assert header(capture, "x-amz-request-id") == ["4D2E363DTESTREQ1"]
    # Repeated headers are all kept, in order: the server's own and the fixture's Server.
    assert header(capture, "server")[-1] == "test-object-store"
    assert len(header(capture, "server")) == 2
    assert capture.establishes == ("observed",)


def test_an_empty_403_to_a_head_is_recorded_as_access_denied(
    collect: Collect, marin_server: LocalServer
) -> None:
    capture = collect(http("head", marin_server.url + ARTIFACT, method="HEAD"))

    assert capture.status == "ok"
    assert capture.data["status"] == 403 and capture.data["body"] is None
    assert capture.blobs == ()
    error_body = capture.data["error_body"]
    assert isinstance(error_body, dict)
    assert error_body["code"] == "AccessDenied" and error_body["source"] == "status"
    assert error_body["request_id"] == "4D2E363DTESTREQ1"
    assert marin_server.requests_to(ARTIFACT)[-1].method == "HEAD"


def test_every_redirect_hop_is_recorded_and_set_cookie_is_redacted(
    collect: Collect, marin_server: LocalServer
) -> None:
    capture = collect(http("moved", marin_server.url + "/moved"))

    assert capture.status == "ok"
    hops = capture.data["redirects"]
    assert isinstance(hops, list)
    assert [(h["status"], h["url"], h["location"]) for h in hops] == [
        (302, marin_server.url + "/moved", marin_server.url + "/moved-again"),
        (
            301,
            marin_server.url + "/moved-again",
            marin_server.url + "/marin/checkpoints/hero/step-58014/metadata.json",
        ),
    ]
    assert capture.data["final_url"] == hops[-1]["location"]
    assert capture.data["json"] == {
        "step": 58014,
        "timestamp": "2026-09-03T23:13:13.777258",
        "is_temporary": True,
    }
    assert header(capture, "set-cookie") == ["[REDACTED]", "[REDACTED]"]
    assert "provider-asserted" in capture.establishes  # the ETag is the server's word


def test_a_redirect_loop_ends_as_too_many_redirects(
    collect: Collect, marin_server: LocalServer
) -> None:
    capture = collect(http("loop", marin_server.url + "/loop", max_redirects=3))

    assert capture.status == "failed"
    assert capture.error is not None and capture.error.type == "too-many-redirects"
    assert len(capture.data["redirects"]) == 4


def test_not_following_redirects_records_the_redirect_itself(
    collect: Collect, marin_server: LocalServer
) -> None:
    capture = collect(http("moved", marin_server.url + "/moved", follow_redirects=False))

    assert capture.status == "ok" and capture.data["status"] == 302
    assert header(capture, "location") == ["/moved-again"]
    assert capture.data["redirects"] == []


def test_https_records_tls_version_and_the_peer_certificate_fingerprint(
    collect: Collect, marin_tls_server: LocalServer
) -> None:
    url = marin_tls_server.url + ARTIFACT
    capture = collect(http("tls", url, ca_bundle=str(marin_tls_server.ca_file)))

    assert capture.status == "ok" and capture.data["status"] == 403
    tls = capture.data["tls"]
    assert isinstance(tls, dict)
    assert tls["peer_cert_sha256"] == marin_tls_server.cert_sha256
    assert tls["version"] in ("TLSv1.2", "TLSv1.3")
    assert tls["subject"] == "CN=localhost" and tls["issuer"] == "CN=prov test CA"
    assert "tls-bound" in capture.establishes


def test_an_untrusted_certificate_is_a_failed_tls_capture_without_retries(
    collect: Collect, marin_tls_server: LocalServer
) -> None:
    capture = collect(http("tls", marin_tls_server.url + ARTIFACT))  # the test CA not trusted

    assert capture.status == "failed"
    assert capture.error is not None and capture.error.type == "tls"
    assert "CERTIFICATE_VERIFY_FAILED" in capture.error.message
    assert len(capture.attempts) == 1
    assert capture.establishes == ()


def test_a_503_that_recovers_is_retried_and_every_attempt_recorded(
    collect: Collect, marin_server: LocalServer
) -> None:
    capture = collect(http("flaky", marin_server.url + "/flaky"), retries=3)

    assert capture.status == "ok" and capture.data["status"] == 200
    assert [a.get("status") for a in capture.attempts] == [503, 503, 200]
    assert all(a["request"] == f"GET {marin_server.url}/flaky" for a in capture.attempts)
    assert "wait_s" in capture.attempts[0] and "wait_s" not in capture.attempts[-1]
    assert len(marin_server.requests_to("/flaky")) == 3


def test_a_429_waits_as_long_as_retry_after_says(
    collect: Collect, marin_server: LocalServer
) -> None:
    started = time.monotonic()
    capture = collect(http("throttled", marin_server.url + "/throttled"))
    elapsed = time.monotonic() - started

    assert capture.status == "ok"
    assert capture.attempts[0]["status"] == 429
    assert capture.attempts[0]["retry_after"] == "1" and capture.attempts[0]["wait_s"] == 1
    assert elapsed >= 1.0


def test_a_503_forever_fails_with_every_attempt_recorded(
    collect: Collect, marin_server: LocalServer
) -> None:
    capture = collect(http("down", marin_server.url + "/down"), retries=2)

    assert capture.status == "failed"
    assert capture.error is not None and capture.error.type == "http-status"
    assert capture.error.detail["status"] == 503 and capture.error.detail["attempts"] == 3
    assert [a["status"] for a in capture.attempts] == [503, 503, 503]
    assert capture.data["status"] == 503  # the last answer is still evidence


def test_an_oversized_body_is_kept_up_to_the_cap(
    collect: Collect, marin_server: LocalServer, tmp_path: Path
) -> None:
    capture = collect(http("big", marin_server.url + "/big", max_body_bytes=1 << 20))

    assert capture.status == "ok"
    assert capture.data["body"] == {
        "size": 1 << 20,
        "truncated": True,
        "complete": False,
        "scrubbed": 0,
        "media_type": "application/octet-stream",
    }
    assert stored(tmp_path, capture) == b"".join(generated_body(8 << 20))[: 1 << 20]


def test_a_connection_reset_mid_body_fails_as_reset(
    collect: Collect, marin_server: LocalServer
) -> None:
    capture = collect(http("reset", marin_server.url + "/reset"))

    assert capture.status == "failed"
    assert capture.error is not None and capture.error.type == "reset"
    assert capture.data["status"] == 200  # the headers arrived before the reset
    body = capture.data["body"]
    assert isinstance(body, dict) and body["complete"] is False
    assert int(body["size"]) < 1 << 20


def test_a_server_slower_than_the_timeout_fails_as_timeout_in_time(
    collect: Collect, marin_server: LocalServer
) -> None:
    started = time.monotonic()
    capture = collect(http("slow", marin_server.url + "/slow", timeout=0.5))
    elapsed = time.monotonic() - started

    assert capture.status == "failed"
    assert capture.error is not None and capture.error.type == "timeout"
    assert capture.error.detail["timeout_s"] == 0.5
    assert 0.5 <= elapsed < 2.0


def test_a_closed_port_is_a_connect_failure_after_the_retries(collect: Collect) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound but never listening: connections are refused
        capture = collect(http("nobody", f"http://127.0.0.1:{port}/x"), retries=2)

    assert capture.status == "failed"
    assert capture.error is not None and capture.error.type == "connect"
    assert [a["outcome"] for a in capture.attempts] == ["connect"] * 3


def test_a_redirect_to_another_host_at_a_private_address_is_refused(
    collect: Collect, marin_server: LocalServer
) -> None:
    """The configured URL is used as configured (here on 127.0.0.1); a redirect from it to
    another host at a link-local or private address is not followed unless the source sets
    ``allow_private``: a server cannot send prov to an internal address (a cloud's metadata
    endpoint). Another name of this machine (``localhost``) is no step inward from 127.0.0.1."""
    from provenance._testing.fixtures import Route

    routes = marin_server.fixtures.routes
    routes.append(Route("/to-metadata", status=302, redirect="http://169.254.169.254/latest/"))
    routes.append(Route("/to-private", status=307, redirect="http://10.11.12.13/internal"))
    local = f"http://localhost:{marin_server.port}{ARTIFACT}"
    routes.append(Route("/to-localhost", status=302, redirect=local))

    assert collect(http("configured", marin_server.url + ARTIFACT)).status == "ok"
    for path in ("/to-metadata", "/to-private"):
        refused = collect(http("redirected", marin_server.url + path))
        assert refused.status == "failed"
        assert refused.error is not None and refused.error.type == "redirect-refused"
        assert "another host" in refused.error.message
    assert collect(http("local", marin_server.url + "/to-localhost")).status == "ok"


def test_custom_headers_are_sent_and_recorded_redacted(
    collect: Collect, marin_server: LocalServer
) -> None:
    capture = collect(
        http(
            "echo",
            marin_server.url + "/echo",
            headers={"Authorization": "Bearer ${ECHO_TOKEN}", "X-Purpose": "audit"},
        ),
        env={"ECHO_TOKEN": "tok-1234567890"},
    )

    sent = marin_server.requests_to("/echo")[-1]
    assert sent.header("authorization") == "Bearer tok-1234567890"
    assert capture.request["headers"] == [["Authorization", "[REDACTED]"], ["X-Purpose", "audit"]]
    echoed = capture.data["json"]
    assert isinstance(echoed, dict)
    assert ["Authorization", "*" * len("Bearer tok-1234567890")] in echoed["headers"]
    body = capture.data["body"]
    assert isinstance(body, dict) and body["scrubbed"] == 1


def test_an_injected_client_is_the_one_used(collect: Collect, marin_server: LocalServer) -> None:
    seen: list[str] = []
    with httpx.Client(event_hooks={"request": [lambda r: seen.append(str(r.url))]}) as client:
        capture = collect(http("moved", marin_server.url + "/moved"), http_client=client)

    assert capture.status == "ok" and capture.data["status"] == 200
    assert seen == [
        marin_server.url + "/moved",
        marin_server.url + "/moved-again",
        marin_server.url + "/marin/checkpoints/hero/step-58014/metadata.json",
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("aws_s3_style_403_AccessDenied.xml", "Access Denied"),
        ("r2_style_403_AccessDenied_minimal.xml", "Access Denied"),
        ("gcs_xml_api_403_AccessDenied.xml", "Access denied."),
    ],
)
def test_real_object_store_error_documents_are_parsed(
    collect: Collect, shared: Path, name: str, message: str
) -> None:
    document = shared / "marin" / "objectstore" / name
    if not document.is_file():
        pytest.skip(f"{document} is not in this copy of ../shared: update it (PROV_SHARED=DIR)")
    route = Route(
        "/bucket/key",
        status=403,
        headers=[("Content-Type", "application/xml")],
        body=document.read_bytes(),
    )
    with LocalServer(Fixtures(routes=[route])) as server:
        capture = collect(http("store", server.url + "/bucket/key"))

    error_body = capture.data["error_body"]
    assert isinstance(error_body, dict)
    assert error_body["code"] == "AccessDenied" and error_body["message"] == message
    if name.startswith("gcs"):
        assert "storage.objects.get" in str(error_body["details"])
    if name.startswith("aws"):
        assert error_body["request_id"] == "EXAMPLE4D2E363D0"


def test_a_body_compressed_against_our_wishes_is_kept_as_sent_and_parsed_decoded(
    collect: Collect, tmp_path: Path
) -> None:
    import gzip

    document = b'{"step": 58014, "tokens": 18005144633344}'
    wire = gzip.compress(document)
    route = Route(
        "/m.json",
        headers=[("Content-Type", "application/json"), ("Content-Encoding", "gzip")],
        body=wire,
    )
    with LocalServer(Fixtures(routes=[route])) as server:
        capture = collect(http("gz", server.url + "/m.json"))
        asked = server.requests[-1].header("accept-encoding")

    assert asked == "identity"
    assert stored(tmp_path, capture) == wire  # the wire bytes, hashed as received
    assert capture.data["json"] == {"step": 58014, "tokens": 18005144633344}


def test_a_header_named_like_a_credential_is_masked_too(
    collect: Collect, marin_server: LocalServer
) -> None:
    capture = collect(
        http("echo", marin_server.url + "/echo", headers={"X-Api-Token": "plain-text-token-42"})
    )

    assert capture.request["headers"] == [["X-Api-Token", "[REDACTED]"]]
    assert "plain-text-token-42" not in capture.model_dump_json()
    assert marin_server.requests_to("/echo")[-1].header("x-api-token") == "plain-text-token-42"


def test_credentials_never_follow_a_redirect_down_to_plain_http(
    collect: Collect, marin_server: LocalServer, marin_tls_server: LocalServer
) -> None:
    """Same host, another scheme: https to http is another origin, so no credential goes on."""
    from provenance._testing.fixtures import Route

    target = marin_server.url + "/echo"  # plain http on the same 127.0.0.1
    marin_server.fixtures.routes.append(Route("/downgrade", status=302, redirect=target))
    capture = collect(
        http(
            "downgrade",
            marin_tls_server.url + "/downgrade",
            ca_bundle=str(marin_tls_server.ca_file),
            headers={"PRIVATE-TOKEN": "glpat-downgrade-0123456789", "Accept": "*/*"},
        )
    )
    assert capture.status == "ok", capture.error
    sent = marin_server.requests_to("/echo")
    assert len(sent) == 1 and sent[0].header("accept") == "*/*"
    assert sent[0].header("private-token") is None
    first = marin_tls_server.requests_to("/downgrade")
    assert first and first[0].header("private-token") == "glpat-downgrade-0123456789"

"""``tls-bound`` is checked against the chain an https capture recorded, at the capture's time."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from provenance._testing.fixtures import Fixtures, Route
from provenance._testing.server import LocalServer
from provenance.errors import VerificationError
from provenance.model import Capture
from provenance.verify import tls


@pytest.fixture
def capture(collect: Callable[..., Capture]) -> Iterator[Capture]:
    routes = [Route("/x", body=b"hello", headers=[("Content-Type", "text/plain")])]
    with LocalServer(Fixtures(routes=routes), tls=True) as server:
        table = {"name": "x", "kind": "http", "url": f"{server.url}/x"}
        yield collect({**table, "ca_bundle": str(server.ca_file)})


def _with_tls(capture: Capture, **changes: Any) -> Capture:
    record = {**capture.data["tls"], **changes}  # type: ignore[dict-item]
    return capture.model_copy(update={"data": {**capture.data, "tls": record}})


def test_an_https_capture_records_its_chain_and_the_claim_holds(capture: Capture) -> None:
    record = capture.data["tls"]
    assert isinstance(record, dict) and "tls-bound" in capture.establishes
    chain = record["chain"]
    assert isinstance(chain, list) and len(chain) == 2
    assert chain[0]["sha256"] == record["peer_cert_sha256"]  # type: ignore[index]
    assert chain[1]["subject"] == "CN=prov test CA"  # type: ignore[index]
    assert "alpn" in record and record["version"] == "TLSv1.3"
    assert "naming localhost" in tls.check(capture)


def test_a_capture_time_outside_the_validity_fails(capture: Capture) -> None:
    late = capture.model_copy(update={"started": "2031-01-01T00:00:00.000000Z"})
    with pytest.raises(VerificationError, match="was not valid at 2031-01-01"):
        tls.check(late)


def test_a_chain_that_is_not_the_peer_certificate_fails(capture: Capture) -> None:
    with pytest.raises(VerificationError, match="not the peer certificate"):
        tls.check(_with_tls(capture, peer_cert_sha256="0" * 64))


def test_a_chain_out_of_order_fails(capture: Capture) -> None:
    record = capture.data["tls"]
    assert isinstance(record, dict)
    pem = str(record["chain_pem"])
    end = "-----END CERTIFICATE-----\n"
    leaf, root = (part + end for part in pem.split(end)[:2])
    swapped = _with_tls(capture, chain_pem=leaf + leaf)
    with pytest.raises(VerificationError, match="not issued by"):
        tls.check(swapped)
    with pytest.raises(VerificationError, match="not the peer certificate"):
        tls.check(_with_tls(capture, chain_pem=root + leaf))


def test_another_host_fails(capture: Capture) -> None:
    moved = capture.model_copy(
        update={"data": {**capture.data, "final_url": "https://example.org/x"}}
    )
    with pytest.raises(VerificationError, match=r"does not name the host 'example\.org'"):
        tls.check(moved)


def test_an_old_capture_without_a_chain_is_not_proven(capture: Capture) -> None:
    record = {k: v for k, v in capture.data["tls"].items() if k != "chain_pem"}  # type: ignore[union-attr]
    old = capture.model_copy(update={"data": {**capture.data, "tls": record}})
    with pytest.raises(VerificationError, match="no certificate chain recorded"):
        tls.check(old)

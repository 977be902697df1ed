"""TLS contexts are shared between captures, and a CA bundle that changes is read again.

Two real TLS servers on 127.0.0.1, each with its own CA; one bundle file rewritten in place
(same path, same size: only its bytes say it changed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from provenance._testing.fixtures import Fixtures, Route
from provenance._testing.server import LocalServer
from provenance.capture._http import ssl_context
from provenance.model import Capture


@pytest.fixture
def servers() -> Iterator[tuple[LocalServer, LocalServer]]:
    fixtures = Fixtures(routes=[Route("/ok", body=b"ok\n")])
    with LocalServer(fixtures, tls=True) as one, LocalServer(fixtures, tls=True) as two:
        yield one, two


def _fetch(collect: Callable[..., Capture], server: LocalServer, bundle: Path) -> Capture:
    table: dict[str, Any] = {
        "name": "tls",
        "kind": "http",
        "url": server.url + "/ok",
        "ca_bundle": str(bundle),
    }
    return collect(table, retries=0)


def test_a_rewritten_bundle_is_trusted_as_it_now_reads(
    collect: Callable[..., Capture], servers: tuple[LocalServer, LocalServer], tmp_path: Path
) -> None:
    one, two = servers
    assert one.ca_file is not None and two.ca_file is not None
    bundle = tmp_path / "ca.pem"
    bundle.write_bytes(one.ca_file.read_bytes())
    assert _fetch(collect, one, bundle).status == "ok"
    refused = _fetch(collect, two, bundle)
    assert refused.status == "failed" and refused.error and refused.error.type == "tls"

    bundle.write_bytes(two.ca_file.read_bytes())
    assert _fetch(collect, two, bundle).status == "ok"
    refused = _fetch(collect, one, bundle)
    assert refused.status == "failed" and refused.error and refused.error.type == "tls"


def test_one_context_per_bundle_content(tmp_path: Path) -> None:
    bundle = tmp_path / "ca.pem"
    with LocalServer(tls=True) as server:
        assert server.ca_file is not None
        bundle.write_bytes(server.ca_file.read_bytes())
    first = ssl_context(bundle, {})
    assert ssl_context(bundle, {}) is first
    assert ssl_context(None, {"SSL_CERT_FILE": str(bundle)}) is first
    assert ssl_context(None, {}) is ssl_context(None, {})  # certifi's
    assert ssl_context(None, {}) is not first
    with pytest.raises(OSError):
        ssl_context(tmp_path / "missing.pem", {})

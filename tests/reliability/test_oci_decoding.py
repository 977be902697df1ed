"""The OCI client decodes a compressed manifest itself, within its size cap (test_hostile.py
has the bomb); what a compliant registry sends still reads the same."""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib

import pytest

from provenance._internal.oci.client import RegistryClient
from provenance._testing.fixtures import Fixtures, Route
from provenance._testing.server import LocalServer
from provenance.errors import RegistryError

MANIFEST = json.dumps(
    {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "layers": []}
).encode()
TYPE = ("Content-Type", "application/vnd.oci.image.manifest.v1+json")


def _raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize(
    ("encoding", "wire"),
    [
        ("identity", MANIFEST),
        ("gzip", gzip.compress(MANIFEST)),
        ("x-gzip", gzip.compress(MANIFEST)),
        ("deflate", zlib.compress(MANIFEST)),
        ("deflate", _raw_deflate(MANIFEST)),  # what some servers send as "deflate"
    ],
    ids=["identity", "gzip", "x-gzip", "deflate-zlib", "deflate-raw"],
)
def test_a_compressed_manifest_reads_as_its_bytes(encoding: str, wire: bytes) -> None:
    path = "/v2/org/image/manifests/v1"
    route = Route(path, body=wire, headers=[TYPE, ("Content-Encoding", encoding)])
    with LocalServer(Fixtures(routes=[route])) as server:
        host = server.url.removeprefix("http://")
        with RegistryClient(host, plain_http=True, timeout=5) as client:
            fetched = client.get_manifest("org/image", "v1")
    assert fetched.data == MANIFEST
    assert fetched.digest == "sha256:" + hashlib.sha256(MANIFEST).hexdigest()


@pytest.mark.parametrize(
    ("encoding", "wire", "kind"),
    [
        ("br", MANIFEST, "decode"),
        ("gzip", b"not gzip at all", "decode"),
        ("gzip", gzip.compress(bytes(5 << 20)), "body-too-large"),
    ],
    ids=["unknown-encoding", "not-gzip", "over-the-cap"],
)
def test_what_cannot_be_decoded_within_the_cap_is_an_error(
    encoding: str, wire: bytes, kind: str
) -> None:
    path = "/v2/org/image/manifests/v1"
    route = Route(path, body=wire, headers=[TYPE, ("Content-Encoding", encoding)])
    with LocalServer(Fixtures(routes=[route])) as server:
        host = server.url.removeprefix("http://")
        with (
            RegistryClient(host, plain_http=True, timeout=5) as client,
            pytest.raises(RegistryError) as caught,
        ):
            client.get_manifest("org/image", "v1")
    assert caught.value.kind == kind

"""Writing a snapshot's http captures as WARC (ISO 28500), so web-archive tools can read them.

Each exchange becomes a ``request`` record and a ``response`` record (redirect hops included)
whose payload is the body bytes kept in the store, followed by a ``metadata`` record holding the
capture itself (the failed ones too: a timeout has no response, but it is still evidence).
Everything written comes from the snapshot and the store, which were redacted at capture time,
so no credential can reach the archive.

The store keeps bodies after HTTP/1.1 de-chunking, so a ``Transfer-Encoding`` header is renamed
(``X-Prov-Orig-Transfer-Encoding``), as web archives do, lest a reader de-chunk twice.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from provenance import __version__
from provenance._internal import canonical
from provenance._internal.files import temp_name
from provenance.digest import Digest
from provenance.errors import StoreError
from provenance.model import Capture, Snapshot
from provenance.store.objects import Store

WARC_VERSION = "1.1"


@dataclass(frozen=True)
class WarcSummary:
    path: Path
    records: int
    captures: int
    responses: int


def export(snapshot: Snapshot, store: Store, target: Path) -> WarcSummary:
    """Write ``target`` (gzip per record when it ends in ``.gz``) atomically."""
    from warcio.warcwriter import WARCWriter

    target.parent.mkdir(parents=True, exist_ok=True)
    temp = temp_name(target.parent)
    counts = {"records": 0, "captures": 0, "responses": 0}
    try:
        with temp.open("wb") as handle:
            writer = WARCWriter(handle, gzip=target.name.endswith(".gz"), warc_version=WARC_VERSION)
            info = writer.create_warcinfo_record(
                target.name,
                {
                    "software": f"prov {__version__}",
                    "format": f"WARC File Format {WARC_VERSION}",
                    "description": f"http captures of prov snapshot {snapshot.label}",
                    "prov-snapshot-sha256": snapshot.sha256().hex,
                },
            )
            writer.write_record(info)
            counts["records"] += 1
            for capture in snapshot.captures:
                if capture.kind != "http":
                    continue
                counts["captures"] += 1
                written, responses = _write_capture(writer, capture, store)
                counts["records"] += written
                counts["responses"] += responses
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except OSError as e:
        raise StoreError(f"cannot write {target}", cause=str(e)) from e
    finally:
        if temp.exists():
            temp.unlink()
    return WarcSummary(target, counts["records"], counts["captures"], counts["responses"])


def _write_capture(writer: Any, capture: Capture, store: Store) -> tuple[int, int]:
    from warcio.statusandheaders import StatusAndHeaders

    data = capture.data
    redirects = data.get("redirects")
    exchanges = [
        (dict(hop), f"redirects/{index}/body")
        for index, hop in enumerate(redirects if isinstance(redirects, list) else [], start=1)
        if isinstance(hop, dict)
    ]
    if data.get("status") is not None:
        final = {
            key: data.get(key)
            for key in ("status", "reason", "headers", "request_headers", "server_ip", "body")
        }
        final.update(method=data.get("method"), url=data.get("final_url"))
        exchanges.append((final, "body"))
    blobs = {blob.name: blob for blob in capture.blobs}
    records = responses = 0
    last_response_id: str | None = None
    for exchange, blob_name in exchanges:
        blob = blobs.get(blob_name)
        url = str(exchange.get("url"))
        http_version = str(exchange.get("http_version") or data.get("http_version") or "HTTP/1.1")
        response_headers = [
            ("X-Prov-Orig-Transfer-Encoding", str(v))
            if str(k).lower() == "transfer-encoding"
            else (str(k), str(v))
            for k, v in _pairs(exchange.get("headers"))
        ]
        status_line = f"{exchange.get('status')} {exchange.get('reason') or ''}".rstrip()
        warc_headers = {"WARC-Date": capture.started}
        if exchange.get("server_ip"):
            warc_headers["WARC-IP-Address"] = str(exchange["server_ip"])
        body_info = exchange.get("body")
        if isinstance(body_info, dict):
            if body_info.get("truncated"):
                warc_headers["WARC-Truncated"] = "length"
            elif body_info.get("complete") is False:
                warc_headers["WARC-Truncated"] = "disconnect"
        payload: IO[bytes] = _checked(store, blob.digest) if blob else io.BytesIO(b"")
        with payload:
            # An explicit length lets warcio stream from the store instead of copying the body
            # into a temporary file (which it would also never close).
            response = writer.create_warc_record(
                url,
                "response",
                payload=payload,
                length=blob.size if blob else 0,
                warc_headers_dict=warc_headers,
                http_headers=StatusAndHeaders(status_line, response_headers, protocol=http_version),
            )
            writer.write_record(response)
        response_id = response.rec_headers.get_header("WARC-Record-ID")
        method = str(exchange.get("method") or data.get("method") or "GET")
        request = writer.create_warc_record(
            url,
            "request",
            payload=io.BytesIO(b""),
            length=0,
            warc_headers_dict={"WARC-Date": capture.started, "WARC-Concurrent-To": response_id},
            http_headers=StatusAndHeaders(
                f"{method} {_path(url)} {http_version}",
                _pairs(exchange.get("request_headers")) or [("Host", urlsplit(url).netloc)],
                is_http_request=True,
            ),
        )
        writer.write_record(request)
        records += 2
        responses += 1
        last_response_id = response_id
    metadata_headers = {"WARC-Date": capture.started}
    if last_response_id:
        metadata_headers["WARC-Concurrent-To"] = last_response_id
    document = canonical.dumps(capture.model_dump(mode="json"))
    metadata = writer.create_warc_record(
        str(data.get("url") or f"urn:prov:{capture.source}"),
        "metadata",
        payload=io.BytesIO(document),
        length=len(document),
        warc_content_type="application/json",
        warc_headers_dict=metadata_headers,
    )
    writer.write_record(metadata)
    return records + 1, responses


def _pairs(value: Any) -> list[tuple[str, str]]:
    if not isinstance(value, list):
        return []
    return [(str(p[0]), str(p[1])) for p in value if isinstance(p, list) and len(p) == 2]


def _path(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _checked(store: Store, address: str) -> IO[bytes]:
    """A body to export, re-hashed first: an archive never carries bytes the snapshot did not
    sign (a store object edited in place is an IntegrityError, nothing is written)."""
    digest = Digest.parse(address)
    store.check(digest)
    return store.open(digest)

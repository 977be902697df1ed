"""Verifying the attestations attached to an image, each under the auditor's trust policy.

The replay check is the one files get: an attachment's name (its layer's title annotation,
``LABEL.intoto.jsonl`` as `prov push` writes it) or ``expect_label`` names the label it must be
signed for. Like a file name, the annotation is not signed: it catches an old attestation
attached under a newer name, not one whose name was changed with it. Whether the snapshot
captured this very image is reported, not required: a snapshot may attest the run that produced
an image without capturing the image itself. Fetching is the caller's (``publish.oci``).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from provenance.errors import ProvError, VerificationError
from provenance.model import Snapshot
from provenance.store.objects import Store
from provenance.verify.audit import run
from provenance.verify.policy import TrustPolicy
from provenance.verify.steps import Report, label_from_filename

__all__ = ["Attached", "verify_attached"]


class Attached(Protocol):
    """One attestation fetched from a registry (``publish.oci.Attached``)."""

    @property
    def manifest(self) -> str: ...
    @property
    def filename(self) -> str: ...
    @property
    def data(self) -> bytes | None: ...
    @property
    def error(self) -> str | None: ...


def verify_attached(
    attached: Sequence[Attached],
    policy: TrustPolicy,
    *,
    subject: str,
    where: str,
    store: Store | None = None,
    expect_label: str | None = None,
) -> list[dict[str, Any]]:
    """One result per attachment: verified or not, its report, what it captured of the image."""
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="prov-oci-") as temp:
        for number, item in enumerate(attached, start=1):
            entry: dict[str, Any] = {
                "manifest": item.manifest,
                "filename": item.filename,
                "verified": False,
                "error": item.error,
                "report": None,
                "captures_image": [],
                "expected_label": None,
            }
            results.append(entry)
            if item.data is None:
                continue
            path = Path(temp) / f"{number:03d}-{_safe_name(item.filename)}"
            path.write_bytes(item.data)
            expected = expect_label or label_from_filename(Path(item.filename.rsplit("/")[-1]))
            entry["expected_label"] = expected
            report = _verify_one(entry, path, policy, store, expected)
            if report is None:
                continue
            report.path = f"{where}@{item.manifest}"
            entry["report"] = report
            if report.snapshot is not None:
                entry["captures_image"] = _captures_of(report.snapshot, subject)
    return results


def _verify_one(
    entry: dict[str, Any], path: Path, policy: TrustPolicy, store: Store | None, label: str | None
) -> Report | None:
    try:
        report = run(path, policy, store=store, expect_label=label)
        entry["verified"] = True
        return report
    except VerificationError as e:
        entry["error"] = e.message
        return e.report if isinstance(e.report, Report) else None
    except ProvError as e:
        entry["error"] = e.message
        return None


def _captures_of(snapshot: Snapshot, digest: str) -> list[str]:
    """Sources of the snapshot that captured this image (by manifest or platform digest)."""
    from provenance._internal.oci.client import as_dict, as_list

    names = []
    for capture in snapshot.captures:
        if capture.kind != "oci" or capture.status != "ok":
            continue
        data = capture.data
        digests = {data.get("digest"), as_dict(data.get("image")).get("digest")}
        digests |= {as_dict(p).get("digest") for p in as_list(data.get("platforms"))}
        if digest in digests:
            names.append(capture.source)
    return names


def _safe_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", name.rsplit("/", 1)[-1]).lstrip(".")
    return cleaned[:120] or "attestation.intoto.jsonl"

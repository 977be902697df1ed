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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from provenance.errors import ProvError, VerificationError
from provenance.model import Snapshot
from provenance.store.objects import Store
from provenance.verify.audit import run
from provenance.verify.policy import TrustPolicy
from provenance.verify.steps import Report, label_from_filename

__all__ = ["Attached", "ImageAudit", "audit_image", "verify_attached"]

SCHEMA = "https://prov.dev/verify-oci-report/v1"


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


@dataclass(frozen=True)
class ImageAudit:
    """``prov verify oci://...``: every attachment's result, and the verdict over all of them."""

    image: str
    subject: str
    method: str
    """How the attachments were found: ``referrers-api`` or ``referrers-tag``."""
    results: list[dict[str, Any]]
    error: VerificationError | None
    """Why the image does not verify (nothing attached, or one failed); None: it does."""

    @property
    def verified(self) -> bool:
        return self.error is None

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "image": self.image,
            "subject": self.subject,
            "found_through": self.method,
            "verified": self.verified,
            "attestations": [
                {**r, "report": r["report"].to_json() if r["report"] else None}
                for r in self.results
            ],
        }


def audit_image(
    image: str,
    subject: str,
    method: str,
    attached: Sequence[Attached],
    policy: TrustPolicy,
    *,
    where: str,
    store: Path | None = None,
    expect_label: str | None = None,
) -> ImageAudit:
    """Verify every attachment under the policy (``policy.from_auditor``: the auditor's trust,
    never a pack's); the image holds when all of them do and there is at least one."""
    blobs = Store(store).require() if store else None
    results = verify_attached(
        attached, policy, subject=subject, where=where, store=blobs, expect_label=expect_label
    )
    error = None
    if not results:
        error = VerificationError(
            f"no attestation is attached to {image} ({subject})",
            hint="attach one with `prov push ATTESTATION oci://...`",
        )
    elif failed := sum(not r["verified"] for r in results):
        error = VerificationError(
            f"{failed} of {len(results)} attestation(s) attached to {image} failed verification"
        )
    return ImageAudit(image, subject, method, results, error)


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

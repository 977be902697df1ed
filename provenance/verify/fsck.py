"""``prov fsck`` as one call: every object re-hashed, what killed writers left removed, and the
objects no snapshot, note or witness statement refers to counted (``prov gc`` removes them)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from provenance._internal.files import sweep_temps
from provenance._internal.progress import task
from provenance.digest import Digest
from provenance.errors import ProvError
from provenance.store.objects import FsckReport, Store
from provenance.verify.reachable import reachable

__all__ = ["StoreCheck", "check_store"]


@dataclass(frozen=True)
class StoreCheck:
    """What ``check_store`` found and did; ``ok`` when nothing is corrupt or damaged."""

    root: Path
    report: FsckReport
    removed: list[str] = field(default_factory=list)
    """Interrupted writes removed, as shown (``tmp/NAME``, ``ATTESTATIONS/NAME``)."""
    in_flight: list[str] = field(default_factory=list)
    corrupt: list[str] = field(default_factory=list)
    """Corrupt objects, as shown (``objects/ab/cdef...`` when loose, else ``blake3:HEX``)."""
    unreferenced: tuple[int, int] | None = None
    """(objects, bytes) no index entry refers to; None when not counted."""
    not_counted: str | None = None
    """Why the unreferenced objects were not counted (an attestation that cannot be read)."""

    @property
    def ok(self) -> bool:
        return not self.report.corrupt and not self.report.damaged


def check_store(store: Store, attestations: Path | None = None) -> StoreCheck:
    """Re-hash the store (loose objects, then each pack) and sweep temp files; with
    ``attestations``, that folder's temp files too."""
    with task(f"re-hashing every object in {store.root}"):
        report = store.fsck()
    removed, in_flight = sweep_temps(attestations) if attestations else ([], [])
    shown = [n if "/" in n else "tmp/" + n for n in report.removed_temp]
    shown += [f"{attestations}/{n}" for n in removed]
    check = StoreCheck(
        store.root, report, shown, report.in_flight + in_flight, _corrupt(store, report)
    )
    if not check.ok:
        return check
    try:
        live = reachable(store).live
    except ProvError as e:
        return replace(check, not_counted=e.message)
    unreferenced = [(n, s) for n, s in store.digests() if n not in live]
    counted = (len(unreferenced), sum(s for _, s in unreferenced))
    return replace(check, unreferenced=counted)


def _corrupt(store: Store, report: FsckReport) -> list[str]:
    shown = []
    for name in report.corrupt:
        where = store.object_path(Digest("blake3", name)) if len(name) == 64 else None
        loose = where is not None and where.exists()
        shown.append(f"objects/{name[:2]}/{name[2:]}" if loose else f"blake3:{name}")
    return shown

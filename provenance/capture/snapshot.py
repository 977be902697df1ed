"""Taking a snapshot: config -> collectors -> store -> snapshot -> statement -> attestation file.

Sources are validated before anything is collected, so a bad prov.toml writes nothing. Collection
runs concurrently (bounded by ``[defaults] concurrency``). The statement is serialised once; those
bytes are signed, written to ``attestations/`` (exclusively: a label is never overwritten) and kept
in the store, whose index then records the snapshot.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from provenance._internal.files import atomic_write, sweep_temps
from provenance.attest import statement as statements
from provenance.attest.signing import Attester
from provenance.capture import crosscheck
from provenance.capture.base import CollectContext, Collector, SourceOptions, validate_source
from provenance.config import Config
from provenance.errors import UsageError
from provenance.model import Capture, Snapshot, utc_now
from provenance.store.objects import SnapshotEntry, Store, os_error

Progress = Callable[[str], None]
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}$")


@dataclass(frozen=True)
class SnapshotResult:
    snapshot: Snapshot
    statement: bytes
    attestation: Path
    failed: tuple[str, ...]

    @property
    def partial(self) -> bool:
        return bool(self.failed)


def default_label() -> str:
    return datetime.now(UTC).strftime("snapshot-%Y%m%dT%H%M%SZ")


def check_label(label: str) -> str:
    if not _LABEL.match(label):
        raise UsageError(
            f"invalid label {label!r}",
            hint="use letters, digits, '.', '_', '+' and '-' (it becomes a file name)",
        )
    return label


def plan(config: Config) -> list[tuple[type[Collector], SourceOptions]]:
    """Validate every source against its collector; the first problem is raised."""
    if not config.sources:
        raise UsageError(
            f"{config.path}: no [[sources]] to capture", hint="add a source (see `prov init`)"
        )
    return [validate_source(spec) for spec in config.sources]


def take(
    config: Config,
    store: Store,
    attester: Attester,
    *,
    label: str | None = None,
    output: Path | None = None,
    progress: Progress | None = None,
) -> SnapshotResult:
    label = check_label(label or default_label())
    planned = plan(config)
    target = output or config.attestations_dir / f"{label}{attester.suffix}"
    if target.exists():
        raise UsageError(
            f"{target} already exists",
            hint="labels are immutable: choose a new --label for a new snapshot",
        )
    store.init()
    sweep_temps(config.attestations_dir)  # what killed writers left in attestations/
    context = CollectContext(
        store=store,
        base_dir=config.base_dir,
        timeout=config.defaults.timeout,
        retries=config.defaults.retries,
        env=dict(os.environ),
        backoff=config.defaults.backoff,
        progress=progress,
    )
    captures = collect_all(planned, context, config.defaults.concurrency, progress)
    snapshot = Snapshot(
        label=label,
        created=utc_now(),
        captures=tuple(sorted(captures, key=lambda c: c.source)),
        cross_checks=crosscheck.run(captures),
    )
    return record(snapshot, store, attester, target)


def record(snapshot: Snapshot, store: Store, attester: Attester, target: Path) -> SnapshotResult:
    """Sign a snapshot, write it to ``target`` (never over a file), keep it and index it.

    ``take`` ends here; so does a signed recheck (``prov recheck --key``), a snapshot too.
    """
    statement = statements.build(snapshot)
    document = attester.attest(statement)
    envelope = store.put_bytes(document)
    try:
        written = atomic_write(target, document)
    except OSError as e:
        raise os_error("write the attestation", target, e) from e
    if not written:
        raise UsageError(f"{target} was created by another process meanwhile; nothing was replaced")
    failed = tuple(c.source for c in snapshot.captures if c.status == "failed")
    store.add_snapshot(
        SnapshotEntry(
            sha256=snapshot.sha256().hex,
            label=snapshot.label,
            created=snapshot.created,
            attestation=str(envelope.digest),
            path=str(target),
            signers=attester.signer_ids(),
            sources=[c.source for c in snapshot.captures],
            failed=list(failed),
        )
    )
    return SnapshotResult(snapshot, statement, target, failed)


def collect_all(
    planned: list[tuple[type[Collector], SourceOptions]],
    context: CollectContext,
    concurrency: int,
    progress: Progress | None = None,
) -> list[Capture]:
    total = len(planned)
    done = 0
    lock = threading.Lock()

    def run(item: tuple[type[Collector], SourceOptions]) -> Capture:
        nonlocal done
        cls, options = item
        started = time.monotonic()
        capture = cls(options, context).collect()
        if progress:
            note = (
                "ok"
                if capture.status == "ok"
                else f"FAILED ({capture.error.type if capture.error else '?'})"
            )
            with lock:
                done += 1
                count = done
            elapsed = time.monotonic() - started
            progress(
                f"  [{count}/{total}] {options.name} [{options.kind}]: {note} ({elapsed:.1f}s)"
            )
        return capture

    workers = max(1, min(concurrency, len(planned)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="prov-collect") as pool:
        return list(pool.map(run, planned))

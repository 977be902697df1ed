"""Taking a snapshot: config -> collectors -> store -> snapshot -> statement -> attestation file.

``prepare`` checks everything that needs no source (the label, the sources' options, the target
file) so that a bad invocation writes nothing and waits for nothing. Collection runs concurrently
(bounded by ``[defaults] concurrency``); each source is a progress task while it runs. The
statement is serialised once; those bytes are signed, written to ``attestations/`` (exclusively:
a label is never overwritten) and kept in the store, whose index then records the snapshot.

Ctrl-C or SIGTERM (``_internal.cancel``) aborts the sources where they block and ends the
collection at once; publishing the attestation and its index entry is shielded, so an
interruption leaves either the whole snapshot or none of it.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from provenance._internal import cancel
from provenance._internal.files import atomic_write, sweep_temps
from provenance._internal.progress import task
from provenance.attest import statement as statements
from provenance.attest.signing import Attester
from provenance.capture import crosscheck
from provenance.capture.base import CollectContext, Collector, SourceOptions, validate_source
from provenance.config import Config
from provenance.errors import UsageError
from provenance.model import Capture, Snapshot, utc_now
from provenance.store.objects import SnapshotEntry, Store, os_error

Item = TypeVar("Item")
Result = TypeVar("Result")
Progress = Callable[[str], None]
Planned = list[tuple[type[Collector], SourceOptions]]
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}$")
UNWIND = 0.5
"""Seconds an interrupted collection gives its aborted sources to return before it goes."""


@dataclass(frozen=True)
class SnapshotResult:
    snapshot: Snapshot
    statement: bytes
    attestation: Path
    failed: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    """What a person should know although every source was captured (a dirty working tree)."""

    @property
    def partial(self) -> bool:
        return bool(self.failed)


@dataclass(frozen=True)
class Plan:
    """A snapshot that passed every check made before collecting: what ``take`` will do."""

    label: str
    target: Path
    sources: Planned


def default_label() -> str:
    return datetime.now(UTC).strftime("snapshot-%Y%m%dT%H%M%SZ")


def check_label(label: str) -> str:
    if not label:
        raise UsageError(
            "the label is empty",
            hint="pass --label NAME, or leave --label out for snapshot-<UTC time>",
        )
    if not _LABEL.match(label):
        raise UsageError(
            f"invalid label {label!r}",
            hint="use letters, digits, '.', '_', '+' and '-' (it becomes a file name)",
        )
    return label


def check_unused(store: Store, label: str) -> None:
    """A label names one snapshot for ever, whatever file its attestation was written to."""
    if not store.exists():
        return
    for entry in store.snapshots():
        if entry.label == label:
            raise UsageError(
                f"the label {label!r} is already used in the store at {store.root} "
                f"(snapshot {entry.sha256[:12]}, {entry.path})",
                hint="labels are immutable: choose a new --label for a new snapshot",
            )


def plan(config: Config) -> Planned:
    """Validate every source against its collector; the first problem is raised."""
    if not config.sources:
        raise UsageError(
            f"{config.path}: no [[sources]] to capture", hint="add a source (see `prov init`)"
        )
    return [validate_source(spec) for spec in config.sources]


def prepare(
    config: Config,
    store: Store,
    suffix: str,
    *,
    label: str | None = None,
    output: Path | None = None,
) -> Plan:
    """Every check that needs no source, in the order a user would fix them."""
    label = check_label(default_label() if label is None else label)
    sources = plan(config)
    target = output or config.attestations_dir / f"{label}{suffix}"
    if target.exists():
        raise UsageError(
            f"{target} already exists",
            hint="labels are immutable: choose a new --label for a new snapshot",
        )
    check_unused(store, label)
    return Plan(label, target, sources)


def take(
    config: Config,
    store: Store,
    attester: Attester,
    *,
    label: str | None = None,
    output: Path | None = None,
    progress: Progress | None = None,
    prepared: Plan | None = None,
) -> SnapshotResult:
    if prepared is None:
        prepared = prepare(config, store, attester.suffix, label=label, output=output)
    label, target = prepared.label, prepared.target
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
    if progress:
        progress(f"collecting {len(prepared.sources)} source(s)...")
    captures = collect_all(prepared.sources, context, config.defaults.concurrency, progress)
    snapshot = Snapshot(
        label=label,
        created=utc_now(),
        captures=tuple(sorted(captures, key=lambda c: c.source)),
        cross_checks=crosscheck.run(captures),
    )
    result = record(snapshot, store, attester, target)
    kinds = {options.name: cls for cls, options in prepared.sources}
    warnings = tuple(w for c in snapshot.captures for w in kinds[c.source].warnings(c))
    return dataclasses.replace(result, warnings=warnings)


def record(snapshot: Snapshot, store: Store, attester: Attester, target: Path) -> SnapshotResult:
    """Sign a snapshot, write it to ``target`` (never over a file), keep it and index it.

    ``take`` ends here; so does a signed recheck (``prov recheck --key``), a snapshot too.
    """
    statement = statements.build(snapshot)
    document = attester.attest(statement)
    envelope = store.put_bytes(document)
    failed = tuple(c.source for c in snapshot.captures if c.status == "failed")
    with cancel.shielded():  # the attestation and its index entry, or neither
        check_unused(store, snapshot.label)  # another process may have taken it meanwhile
        try:
            written = atomic_write(target, document)
        except OSError as e:
            raise os_error("write the attestation", target, e) from e
        if not written:
            raise UsageError(
                f"{target} was created by another process meanwhile; nothing was replaced"
            )
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
    planned: Planned,
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
        with task(f"{options.name} [{options.kind}]"):
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

    return run_parallel(run, planned, concurrency, "prov-collect")


def run_parallel(
    function: Callable[[Item], Result], items: Sequence[Item], concurrency: int, name: str
) -> list[Result]:
    """``function`` over ``items`` on at most ``concurrency`` threads, results in order."""
    workers = max(1, min(concurrency, len(items)))
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
    futures = [pool.submit(function, item) for item in items]
    try:
        results = [future.result() for future in futures]
    except KeyboardInterrupt:
        # Ctrl-C / SIGTERM: abort what blocks (sockets, git), let it unwind briefly, and go;
        # a source still running after that is abandoned (the command line exits 130).
        cancel.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
        concurrent.futures.wait(futures, timeout=UNWIND)
        raise
    finally:
        pool.shutdown(wait=not cancel.cancelled())
    return results

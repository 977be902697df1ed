"""``prov recheck`` and ``prov witness`` as library calls: a snapshot's sources asked again.

Both load the snapshot, ask every source again and classify each capture (``_ask``); a recheck
may then sign what it saw as a snapshot of its own, a witness signs what matched. The commands
only parse options and print what these return.
"""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from provenance.attest.keys import LocalSigner
from provenance.attest.signing import DsseAttester
from provenance.capture.base import CollectContext
from provenance.capture.recheck import Recollected, recollect
from provenance.capture.snapshot import record
from provenance.compare import witness as witnesses
from provenance.compare.evidence import StoreBlobs
from provenance.compare.recheck import (
    RecheckReport,
    SourceCheck,
    classify,
    recheck_label,
    recheck_snapshot,
    report,
)
from provenance.errors import UsageError
from provenance.model import Snapshot, utc_now
from provenance.store.objects import Store
from provenance.verify.resolve import load

__all__ = ["recheck", "witness"]

Say = Callable[[str], None]


@dataclass(frozen=True)
class _Asked:
    snapshot: Snapshot
    items: list[Recollected]
    checks: list[SourceCheck]
    target: Store | None
    """Where signed results go: the configured store when kept or already there, else None."""
    checked: str


def _ask(
    stack: ExitStack,
    reference: str,
    store: Store,
    base_dir: Path,
    concurrency: int,
    keep: bool,
    say: Say,
) -> _Asked:
    """Load the snapshot, ask every source again, classify each: what both commands share."""
    loaded = load(reference, store if store.exists() else None)
    snapshot = loaded.snapshot
    # Blobs go to the store when the result is kept (signed) or a store is there already;
    # otherwise to a temporary one, so that a recheck writes nothing an auditor did not ask for.
    if keep or store.exists():
        target: Store | None = store
        collect_into = store
    else:
        target = None
        collect_into = Store(Path(stack.enter_context(tempfile.TemporaryDirectory())) / "store")
    collect_into.init()
    context = CollectContext(
        store=collect_into, base_dir=base_dir, env=dict(os.environ), progress=say
    )
    checked = utc_now()
    say(
        f"{loaded.origin}: {loaded.signatures} signature(s), not checked here: this compares "
        "content (`prov verify` checks who signed)"
    )
    say(f"asking the {len(snapshot.captures)} source(s) of {snapshot.label} again...")
    items = recollect(snapshot, context, concurrency=concurrency, progress=say)
    attested = StoreBlobs(loaded.store or store)
    observed = StoreBlobs(collect_into)
    checks = [classify(item, attested, observed) for item in items]
    return _Asked(snapshot, items, checks, target, checked)


def _default_output(reference: str, name: str) -> Path:
    given = Path(reference)
    folder = given.parent if given.is_file() else Path("attestations")
    return folder / name


def recheck(
    reference: str,
    store: Store,
    *,
    base_dir: Path,
    concurrency: int,
    signers: Sequence[LocalSigner] = (),
    output: Path | None = None,
    say: Say,
) -> RecheckReport:
    """Ask the sources again; with ``signers``, sign the captures made now as a linked snapshot."""
    with ExitStack() as stack:
        asked = _ask(stack, reference, store, base_dir, concurrency, bool(signers), say)
        snapshot, checks = asked.snapshot, asked.checks
        if not signers:
            return report(snapshot, checks, asked.checked)
        assert asked.target is not None
        label = recheck_label(snapshot.label)
        signed = recheck_snapshot(snapshot, asked.items, checks, label)
        path = output or _default_output(reference, f"{label}.intoto.jsonl")
        if path.exists():
            raise UsageError(f"{path} already exists", hint="choose another -o path")
        path.parent.mkdir(parents=True, exist_ok=True)
        record(signed, asked.target, DsseAttester(signers), path)
        return report(snapshot, checks, asked.checked, signed, str(path))


def witness(
    reference: str,
    store: Store,
    *,
    base_dir: Path,
    concurrency: int,
    signer: LocalSigner,
    operator: str | None = None,
    region: str | None = None,
    output: Path | None = None,
    say: Say,
) -> witnesses.WitnessRun:
    """Ask the sources again from here and sign a witness statement for what matched."""
    with ExitStack() as stack:
        asked = _ask(stack, reference, store, base_dir, concurrency, False, say)
        snapshot, checks = asked.snapshot, asked.checks
        where = witnesses.vantage(operator or socket.gethostname(), region, asked.items)
        matched = [c for c in checks if c.outcome == "same"]
        path = None
        if matched:
            statement = witnesses.build(snapshot, asked.items, checks, where)
            name = f"{snapshot.label}.witness.{signer.keyid[:16]}.intoto.jsonl"
            path = output or _default_output(reference, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            witnesses.record(statement, DsseAttester([signer]), path, asked.target)
        return witnesses.WitnessRun(
            vantage=where,
            statement=str(path) if path else None,
            witnessed=[c.source for c in matched],
            recheck=report(snapshot, checks, asked.checked),
        )

"""``prov prove``: an inclusion proof for one file of a manifest, and the auditor's check of it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from provenance.cli._options import resolve_store_path, store_option

if TYPE_CHECKING:
    from provenance.model import Capture, Snapshot
    from provenance.store.manifest import ManifestInfo

SCHEMA = "https://prov.dev/inclusion-proof/v1"


@click.command()
@click.argument("snapshot")
@click.argument("path", required=False)
@click.option("--source", help="The capture to prove from (needed when several have a manifest).")
@click.option(
    "--check",
    "proof_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Check this proof against SNAPSHOT's signed root instead of making one.",
)
@store_option
def prove(
    snapshot: str, path: str | None, source: str | None, proof_file: Path | None, store: Path | None
) -> None:
    """Print an inclusion proof that PATH is in SNAPSHOT's manifest.

    A git capture over many files, and every listing, signs the Merkle root
    (RFC 9162, blake3) of its manifest rather than the list. The proof is the
    file's manifest entry and log2(n) hashes; anyone holding the attestation
    checks it with `prov prove SNAPSHOT --check PROOF.json`, without the
    manifest or the other files. Exit 1 when the proof does not lead to the
    root. This does not check signatures: `prov verify` the attestation too.
    """
    import json  # here, not at the top: `prov --help` does not need it

    from provenance.errors import UsageError
    from provenance.store.manifest import InclusionProof, prove, verify_proof
    from provenance.store.objects import Store
    from provenance.verify.resolve import load

    loaded = load(snapshot, Store(resolve_store_path(store)))
    if proof_file is not None:
        from provenance._internal import strictjson
        from provenance.errors import InputError

        try:
            document = strictjson.loads(proof_file.read_bytes())
        except OSError as e:
            raise InputError(f"cannot read {proof_file}", cause=str(e)) from e
        except ValueError as e:
            raise UsageError(f"{proof_file} is not JSON", cause=str(e)) from e
        if not isinstance(document, dict) or document.get("schema") != SCHEMA:
            raise UsageError(f"{proof_file} is not a prov inclusion proof ({SCHEMA})")
        capture, info = _manifest(loaded.snapshot, str(document.get("source") or ""))
        entry = verify_proof(InclusionProof.from_json(document["proof"]), info.root, info.count)
        click.echo(
            f"proven: {entry['key']!r} is entry {document['proof']['index']:,} of the "
            f"{info.count:,}-entry manifest of {capture.source!r} in snapshot "
            f"{loaded.snapshot.label!r} (root {info.root})"
        )
        click.echo(json.dumps(entry, sort_keys=True))
        return
    if path is None:
        raise UsageError("name the PATH to prove", hint="prov prove SNAPSHOT PATH")
    if loaded.store is None:
        raise UsageError(
            "proving needs the manifest: give a store (--store) or an evidence pack",
            hint="checking a proof needs only the attestation: prov prove SNAPSHOT --check FILE",
        )
    capture, info = _manifest(loaded.snapshot, source)
    try:
        proof = prove(loaded.store, info, path.strip("/"))
    except KeyError:
        raise UsageError(
            f"{path!r} is not in the manifest of {capture.source!r} ({info.count:,} entries)"
        ) from None
    output: dict[str, Any] = {
        "schema": SCHEMA,
        "snapshot": {"label": loaded.snapshot.label, "sha256": loaded.snapshot.sha256().hex},
        "source": capture.source,
        "manifest": info.to_json(),
        "proof": proof.to_json(),
    }
    click.echo(json.dumps(output, indent=2))


def _manifest(snapshot: Snapshot, source: str | None) -> tuple[Capture, ManifestInfo]:
    from provenance.errors import UsageError
    from provenance.store.manifest import ManifestInfo

    with_manifest = [
        c
        for c in snapshot.captures
        if c.status == "ok" and isinstance(c.data.get("manifest"), dict)
    ]
    if source:
        with_manifest = [c for c in with_manifest if c.source == source]
    if len(with_manifest) != 1:
        names = ", ".join(c.source for c in with_manifest) or "none"
        raise UsageError(
            f"snapshot {snapshot.label!r}: {len(with_manifest)} capture(s) with a manifest "
            f"match ({names})",
            hint="name one with --source; small git captures list their files instead",
        )
    capture = with_manifest[0]
    return capture, ManifestInfo.from_capture(capture)

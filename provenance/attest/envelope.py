"""Reading an attestation file from disk: one DSSE envelope on one line.

Every reader (verify, show, diff, check, timestamp) starts here, so a missing, empty or
multi-line file gets the same error everywhere.
"""

from __future__ import annotations

from pathlib import Path

from provenance.attest import dsse
from provenance.errors import InputError, VerificationError

__all__ = ["read_attestation", "read_envelope"]


def read_envelope(path: Path) -> dsse.Envelope:
    try:
        data = path.read_bytes()
    except FileNotFoundError as e:
        raise InputError(
            f"{path} does not exist", hint="pass the path of an attestation file"
        ) from e
    except OSError as e:
        raise InputError(f"cannot read {path}", cause=str(e)) from e
    lines = [line for line in data.splitlines() if line.strip()]
    if not lines:
        raise VerificationError(f"{path} is empty", hint="the file may have been truncated")
    if len(lines) > 1:
        raise VerificationError(
            f"{path} holds {len(lines)} lines; a prov attestation is one envelope on one line"
        )
    return dsse.parse(lines[0], origin=str(path))


def read_attestation(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError as e:
        raise InputError(
            f"{path} does not exist", hint="pass the path of an attestation file"
        ) from e
    except OSError as e:
        raise InputError(f"cannot read {path}", cause=str(e)) from e

"""Loading private keys for a command, asking for a passphrase on a terminal.

``PROV_KEY_PASSWORD`` comes first; failing that, an encrypted key is unlocked by asking the
person at the terminal (never echoed, never kept). Without a terminal (CI, a pipe) nothing is
asked and the error says to set the variable.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from provenance.attest.keys import LocalSigner


def load_signers(paths: tuple[Path, ...] | list[Path]) -> list[LocalSigner]:
    from provenance.attest import keys

    signers = []
    for path in paths:
        password = os.environ.get(keys.PASSWORD_ENV) or None
        if password is None and keys.is_encrypted(path) and sys.stdin.isatty():
            password = click.prompt(f"passphrase for {path}", hide_input=True, err=True)
        signers.append(keys.load_signer(path, password))
    return signers

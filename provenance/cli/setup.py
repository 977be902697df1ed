"""``prov init`` and ``prov keygen``."""

from __future__ import annotations

import os
from pathlib import Path

import click


@click.command()
@click.option(
    "--dir",
    "directory",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path(),
    show_default=True,
    help="Project directory.",
)
@click.option(
    "--keygen", "key_name", metavar="NAME", help="Also make a key pair keys/NAME.{key,pub}."
)
def init(directory: Path, key_name: str | None) -> None:
    """Write a prov.toml template (and optionally a key pair)."""
    from provenance._internal.files import atomic_write
    from provenance.config import CONFIG_NAME, TEMPLATE
    from provenance.errors import UsageError

    target = directory / CONFIG_NAME
    if not atomic_write(target, TEMPLATE.encode()):
        raise UsageError(f"{target} already exists", hint="edit it, or remove it to start over")
    for sub in ("attestations", "keys"):
        (directory / sub).mkdir(exist_ok=True)
    click.echo(f"wrote {target}")
    if key_name:
        _keygen(directory / "keys", key_name, "ed25519", encrypt=False)


@click.command()
@click.argument("name")
@click.option(
    "--dir",
    "directory",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("keys"),
    show_default=True,
    help="Where to write the key pair.",
)
@click.option(
    "--algorithm",
    type=click.Choice(["ed25519", "ecdsa-p256"]),
    default="ed25519",
    show_default=True,
)
@click.option(
    "--encrypt",
    is_flag=True,
    help="Encrypt the private key with a passphrase [env PROV_KEY_PASSWORD, else prompt].",
)
def keygen(name: str, directory: Path, algorithm: str, encrypt: bool) -> None:
    """Make keys/NAME.key (0600, never commit it) and keys/NAME.pub."""
    _keygen(directory, name, algorithm, encrypt)


def _keygen(directory: Path, name: str, algorithm: str, encrypt: bool) -> None:
    from provenance.attest import keys

    password = os.environ.get(keys.PASSWORD_ENV) or None
    if encrypt and not password:
        password = click.prompt("passphrase", hide_input=True, confirmation_prompt=True, err=True)
    directory.mkdir(parents=True, exist_ok=True)
    private, public = keys.generate(directory, name, algorithm, password)  # type: ignore[arg-type]
    click.echo(f"wrote {private} (private, mode 0600: keep it out of version control)")
    click.echo(f"wrote {public} (public: give it to verifiers)")

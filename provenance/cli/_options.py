"""Options shared by several commands."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

import click

from provenance.render.formats import Format

F = TypeVar("F", bound=Callable[..., Any])


FILE = click.Path(path_type=Path, dir_okay=False)
FOLDER = click.Path(path_type=Path, file_okay=False)


def output_option(help: str, *, required: bool = False, folder: bool = False) -> Callable[[F], F]:
    """``-o / --output``: the file (or with ``folder``, the folder) a command writes."""
    return click.option(
        "-o", "--output", type=FOLDER if folder else FILE, required=required, help=help
    )


def signing_keys_option(
    help: str, *, name: str = "--key", dest: str = "key_paths", required: bool = False
) -> Callable[[F], F]:
    """``--key`` (repeatable): the private keys a command signs with."""
    return click.option(name, dest, multiple=True, required=required, type=FILE, help=help)


def claims_option(help: str, *, required: bool = False) -> Callable[[F], F]:
    """``--claims FILE``: a claims file, handed over as ``claims_path``."""
    return click.option("--claims", "claims_path", required=required, type=FILE, help=help)


def store_option(function: F) -> F:
    return click.option(
        "--store",
        type=click.Path(path_type=Path, file_okay=False),
        default=None,
        help="Content store directory [env PROV_STORE; default: prov.toml's, else .prov].",
    )(function)


def config_option(function: F) -> F:
    return click.option(
        "-c",
        "--config",
        "config_path",
        type=click.Path(path_type=Path, dir_okay=False),
        default=Path("prov.toml"),
        envvar="PROV_CONFIG",
        show_default=True,
        help="Configuration file [env PROV_CONFIG].",
    )(function)


def format_option(function: F) -> F:
    """``--format text|json``: for commands whose output is a report or a record."""
    return formats_option(Format.TEXT, Format.JSON)(function)


def formats_option(*offered: Format) -> Callable[[F], F]:
    """``--format`` with the formats a command can write (every one of ``Format`` by default)."""
    choices = [f.value for f in offered or tuple(Format)]
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(choices),
        default=Format.TEXT.value,
        show_default=True,
        help="Output format.",
    )


def text_or_json(value: str) -> Literal[Format.TEXT, Format.JSON]:
    """The format of a command that offers text and JSON only (``format_option``)."""
    fmt = Format(value)
    if fmt is Format.TEXT or fmt is Format.JSON:
        return fmt
    raise click.BadParameter(f"{value!r} is not offered here", param_hint="--format")


def emit(value: str, document: Callable[[], dict[str, Any]], text: Callable[[], str]) -> None:
    """Print a command's result as ``--format`` says: ``document()`` as JSON, or ``text()``."""
    if text_or_json(value) is Format.JSON:
        import json

        click.echo(json.dumps(document(), indent=2))
    else:
        click.echo(text(), nl=False)


def resolve_store_path(explicit: Path | None, configured: Path | None = None) -> Path:
    """``config.store_path``, imported when a command runs (``prov --help`` needs no pydantic)."""
    from provenance.config import store_path

    return store_path(explicit, configured)


def _trust_click_options(with_trust_pack: bool, key_help: str) -> list[Callable[[F], F]]:
    file = click.Path(path_type=Path, dir_okay=False)
    options = [
        click.option("--key", "key_paths", multiple=True, type=file, help=key_help),
        click.option(
            "--threshold",
            type=click.IntRange(min=1),
            default=1,
            show_default=True,
            help="How many distinct trusted keys must have signed.",
        ),
        click.option(
            "--cert-identity", help="Sigstore: the signer's identity (SAN), matched exactly."
        ),
        click.option(
            "--cert-oidc-issuer",
            help="Sigstore: the identity's OIDC issuer, matched exactly "
            "[default with --repository: GitHub Actions].",
        ),
        click.option(
            "--repository",
            metavar="OWNER/NAME",
            help="Sigstore: signed by a GitHub Actions workflow of this repository.",
        ),
        click.option("--ref", help="Sigstore: ...and on this git ref (e.g. refs/tags/v1.0)."),
        click.option(
            "--trusted-root",
            type=file,
            help="Sigstore trusted_root.json [default: production, shipped with sigstore; "
            "offline]. Never taken from a pack.",
        ),
        click.option(
            "--tsa-certs",
            type=file,
            help="PEM chain of the timestamp authority whose RFC 3161 token must verify.",
        ),
    ]
    if with_trust_pack:
        options.append(
            click.option(
                "--trust-pack",
                is_flag=True,
                help="Trust the keys, identity, trusted root and TSA chain an evidence "
                "pack brings (each is printed); only without the options above.",
            )
        )
    return options


def _trust_decorator(with_trust_pack: bool, key_help: str) -> Callable[[F], F]:
    """The trust options (``verify.policy.TrustOptions``), handed to the command as ``trust``."""

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def command(*args: Any, **kwargs: Any) -> Any:
            from provenance.verify.policy import TrustOptions

            kwargs["trust"] = TrustOptions(
                keys=kwargs.pop("key_paths"),
                threshold=kwargs.pop("threshold"),
                identity=kwargs.pop("cert_identity"),
                issuer=kwargs.pop("cert_oidc_issuer"),
                repository=kwargs.pop("repository"),
                ref=kwargs.pop("ref"),
                trusted_root=kwargs.pop("trusted_root"),
                tsa_certs=kwargs.pop("tsa_certs"),
                trust_pack=kwargs.pop("trust_pack", False),
            )
            return function(*args, **kwargs)

        for option in reversed(_trust_click_options(with_trust_pack, key_help)):
            command = option(command)
        return command  # type: ignore[return-value]

    return decorate


trust_options = _trust_decorator(True, "A trusted public key (repeat for several).")
"""``--key``, ``--threshold``, Sigstore identity, ``--trusted-root``, ``--tsa-certs``,
``--trust-pack``: the same on ``verify`` and on every command that reads evidence."""

packing_trust_options = _trust_decorator(
    False, "A public key the attestation verifies with (repeat; packed with it)."
)
"""The same options on ``prov pack``, which verifies before it packs (no pack to trust yet)."""


def plain_http_option(function: F) -> F:
    return click.option(
        "--plain-http", is_flag=True, help="Talk plain http to a registry on 127.0.0.1 / localhost."
    )(function)


def witness_options(function: Any) -> Any:
    """``prov verify``'s options for counting observers."""
    function = click.option(
        "--witness-policy",
        type=click.Path(path_type=Path, dir_okay=False),
        help="A witness policy (keys, groups, quorum; see docs/evidence.md) that every "
        "capture must meet.",
    )(function)
    function = click.option(
        "--require-witnesses",
        type=click.IntRange(min=1),
        metavar="N",
        help="Fail unless every capture was witnessed by N distinct trusted keys besides "
        "the publisher's.",
    )(function)
    return click.option(
        "--witness",
        "witness_paths",
        multiple=True,
        type=click.Path(path_type=Path, dir_okay=False),
        help="A witness statement to count (repeat) [default: LABEL.witness.*.intoto.jsonl "
        "beside ATTESTATION].",
    )(function)


UNCHECKED = (
    "note: signatures were not checked (pass --key PUB, or --cert-identity and "
    "--cert-oidc-issuer, to verify first); what was read was re-hashed"
)


def say_what_was_checked(*verified: tuple[str, ...] | None) -> None:
    """One line on stderr when a reader read evidence whose signatures it did not check."""
    if any(signers is None for signers in verified):
        click.echo(UNCHECKED, err=True)

"""``prov diff``, ``prov check`` and ``prov note``: the auditor's side."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from provenance.cli._options import (
    claims_option,
    formats_option,
    output_option,
    resolve_store_path,
    say_what_was_checked,
    signing_keys_option,
    store_option,
    trust_options,
)

if TYPE_CHECKING:
    from provenance.compare.claims import ClaimsFile
    from provenance.compare.diff import Diff
    from provenance.store.objects import Store
    from provenance.verify.policy import TrustOptions

F = TypeVar("F", bound=Callable[..., Any])


def _colour_option(function: F) -> F:
    return click.option(
        "--color/--no-color",
        "colour",
        default=None,
        help="Colour the text output [default: when stdout is a terminal and NO_COLOR is unset].",
    )(function)


def _use_colour(explicit: bool | None) -> bool:
    if explicit is not None:
        return explicit
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _store(explicit: Path | None) -> Store | None:
    from provenance.store.objects import Store

    store = Store(resolve_store_path(explicit))
    return store if store.exists() else None


@click.command()
@click.argument("a")
@click.argument("b")
@store_option
@formats_option()
@_colour_option
@trust_options
@signing_keys_option(
    "Also sign the diff with this private key (repeatable): writes an in-toto statement.",
    name="--sign-key",
    dest="sign_paths",
)
@output_option("Where the signed diff goes [default: diff-A-B.intoto.jsonl].")
@click.option("--stat", is_flag=True, help="Only the summary: what changed, source by source.")
@claims_option("Also check this claims file at A and B: the summary names the claims affected.")
@click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="NAME",
    help="Only these sources (a shell pattern; repeatable).",
)
@click.option(
    "--path",
    "paths",
    multiple=True,
    metavar="GLOB",
    help="Only these files or change paths, e.g. '*.py', 'config.trainer.*' (repeatable).",
)
@click.option(
    "--max-lines",
    type=click.IntRange(min=0),
    default=1000,
    show_default=True,
    help="Detail lines shown before 'N more' (0: all); the JSON always has everything.",
)
@click.pass_context
def diff(
    ctx: click.Context,
    a: str,
    b: str,
    store: Path | None,
    output_format: str,
    colour: bool | None,
    trust: TrustOptions,
    sign_paths: tuple[Path, ...],
    output: Path | None,
    stat: bool,
    sources: tuple[str, ...],
    paths: tuple[str, ...],
    max_lines: int,
    claims_path: Path | None,
) -> None:
    """Show what changed between two snapshots. Exit 0 when equal, 1 when they differ.

    A and B are attestation files, or labels / sha256 prefixes of snapshots in the
    store. File contents (unified diffs, JSON / YAML / TOML documents) are compared
    when their blobs are in the store. Volatile fields (timestamps, heartbeats, step
    counters, request ids) are listed apart and do not count as differences. With
    --key / --cert-identity (as for verify) both sides are verified first. The
    summary comes first; --source and --path narrow the diff (and its exit code).
    """
    from provenance.compare import notes
    from provenance.compare.diff import compare, select
    from provenance.compare.evidence import open_evidence
    from provenance.errors import UsageError
    from provenance.render import report as render

    if output is not None and not sign_paths:
        raise UsageError("-o names the signed diff: pass --sign-key too")
    claims_file = _claims(claims_path)  # refuses unsafe expressions before anything is read
    target_store = _store(store)
    left = open_evidence(a, target_store, trust)
    right = open_evidence(b, target_store, trust)
    say_what_was_checked(left.verified, right.verified)
    spanned = notes.spanning(target_store, left.snapshot, right.snapshot, trust)
    result = compare(left, right, spanned)
    if claims_file is not None:
        from provenance.compare.claims import affected

        result = affected(claims_file, left, right, result)
    if sign_paths:
        _sign_diff(result, sign_paths, output)
    shown = select(result, sources, paths)
    fmt = render.Format(output_format)
    use = _use_colour(colour)
    page = render.render_diff(shown, fmt, colour=use, stat=stat, max_lines=max_lines or None)
    # click strips ANSI codes off a non-terminal unless told the colour was asked for
    click.echo(page, nl=False, color=use)
    ctx.exit(0 if shown.equal else 1)


def _claims(path: Path | None) -> ClaimsFile | None:
    if path is None:
        return None
    from provenance.compare import claims

    return claims.load(path)


def _sign_diff(result: Diff, key_paths: tuple[Path, ...], output: Path | None) -> None:
    from provenance.attest.signing import DsseAttester
    from provenance.cli._keys import load_signers
    from provenance.compare.diff import write_signed

    target = write_signed(result, DsseAttester(load_signers(key_paths)), output)
    click.echo(f"wrote the signed diff to {target}", err=True)


@click.command()
@claims_option("The claims file (TOML, [[claims]] tables).", required=True)
@click.argument("snapshot")
@store_option
@formats_option()
@_colour_option
@trust_options
@click.pass_context
def check(
    ctx: click.Context,
    claims_path: Path,
    snapshot: str,
    store: Path | None,
    output_format: str,
    colour: bool | None,
    trust: TrustOptions,
) -> None:
    """Check published numbers against a snapshot.

    \b
    Each claim names the published value, its source, an expression deriving
    the value from the snapshot and a tolerance:
      [[claims]]
      name = "total training tokens"
      claimed = "18.75T"
      source = "announcement, 2026-08-21"
      derived = '''captures['hero-run'].config.trainer.num_train_steps
                   * captures['hero-run'].config.trainer.train_batch_size * 4096'''
      tolerance = 0.005        # relative; or "0.5%"; abs_tolerance = N for absolute

    \b
    Expressions read captures (.documents['f.json'], .constants['f.py'].NAME:
    a Python file's constants, never run) with + - * / // % **, comparisons, in,
    a if c else b, min max sum len abs round int number gcd ceil floor (also
    math.gcd ...); a [let] table names sub-expressions (docs/diff-and-claims.md).

    Exit 0 when every claim holds, 1 when one fails, 2 when one cannot be
    evaluated (a missing field, a refused expression: nothing is evaluated then).
    """
    from provenance.compare import claims as claims_module
    from provenance.compare import notes
    from provenance.compare.evidence import open_evidence
    from provenance.errors import ClaimsError
    from provenance.render import report as render

    claims_file = claims_module.load(claims_path)  # refuses unsafe expressions before any runs
    target_store = _store(store)
    evidence = open_evidence(snapshot, target_store, trust)
    say_what_was_checked(evidence.verified)
    report = claims_module.check(
        claims_file, evidence, notes.up_to(target_store, evidence.snapshot, trust)
    )
    fmt = render.Format(output_format)
    use = _use_colour(colour)
    click.echo(render.render_claims(report, fmt, colour=use), nl=False, color=use)
    if report.errors:
        error = ClaimsError(
            f"{report.errors} claim(s) could not be evaluated",
            hint="fix the expressions named above (`prov show SNAPSHOT` lists the fields)",
        )
        click.echo(error.diagnostics(), err=True)
        ctx.exit(error.exit_code)
    ctx.exit(1 if report.failed else 0)


@click.command()
@click.argument("snapshot")
@click.option("--text", required=True, help="What changed, why, and what no longer holds.")
@click.option(
    "--supersedes",
    multiple=True,
    metavar="CLAIM",
    help="A claim (by name) or earlier note (by id) that no longer holds (repeatable).",
)
@signing_keys_option("Sign with this private key (repeat for several signers).", required=True)
@store_option
@output_option("Also write the signed note to this file.")
def note(
    snapshot: str,
    text: str,
    supersedes: tuple[str, ...],
    key_paths: tuple[Path, ...],
    store: Path | None,
    output: Path | None,
) -> None:
    """Record a signed, timestamped change note about a snapshot.

    The note is its own signed statement kept in the store; the snapshot's
    attestation is never altered. Notes show in `prov log` and in diffs that span
    them.
    """
    from provenance.attest.signing import DsseAttester
    from provenance.cli._keys import load_signers
    from provenance.compare import notes
    from provenance.store.objects import Store
    from provenance.verify.resolve import load

    target_store = Store(resolve_store_path(store))
    loaded = load(snapshot, target_store if target_store.exists() else None)
    signers = load_signers(key_paths)
    entry = notes.record(
        target_store,
        loaded.snapshot,
        text,
        DsseAttester(signers),
        supersedes=supersedes,
        output=output,
    )
    click.echo(f"note {entry.id[:12]} on {entry.note.snapshot.label} ({entry.note.created})")
    click.echo(f"  stored as {entry.attestation} in {target_store.root}")
    if entry.path:
        click.echo(f"  written to {entry.path}")


@click.command()
@click.argument("a")
@click.argument("b")
@claims_option("The claims file, checked against B.", required=True)
@store_option
@formats_option()
@output_option("Write the report here [default: stdout].")
@trust_options
def report(
    a: str,
    b: str,
    claims_path: Path,
    store: Path | None,
    output_format: str,
    output: Path | None,
    trust: TrustOptions,
) -> None:
    """One page for a milestone: claims against B, and what changed since A.

    Meant for release notes (--format markdown) and auditors (--format html, a
    self-contained page). The verdicts are `prov check` and `prov diff`'s: this
    command writes the page and exits 0.
    """
    from provenance._internal.files import atomic_write
    from provenance.compare import claims as claims_module
    from provenance.compare import notes
    from provenance.compare.diff import compare
    from provenance.compare.evidence import open_evidence
    from provenance.render import report as render

    claims_file = claims_module.load(claims_path)
    target_store = _store(store)
    left = open_evidence(a, target_store, trust)
    right = open_evidence(b, target_store, trust)
    say_what_was_checked(left.verified, right.verified)
    spanned = notes.spanning(target_store, left.snapshot, right.snapshot, trust)
    result = claims_module.affected(claims_file, left, right, compare(left, right, spanned))
    noted = notes.up_to(target_store, right.snapshot, trust)
    checked = claims_module.check(claims_file, right, noted)
    page = render.render_report(result, checked, render.Format(output_format))
    if output is None:
        click.echo(page, nl=False)
        return
    atomic_write(output, page.encode(), overwrite=True)
    click.echo(f"wrote {output}", err=True)

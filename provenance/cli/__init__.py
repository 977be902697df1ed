"""The ``prov`` command line: a thin shell over the library.

This is the one place that catches ``ProvError``: it prints the diagnostics to stderr and exits
with the error's code. It is also where Ctrl-C and SIGTERM end up: each command runs with their
handlers (``_internal.cancel``) and an interruption exits 130 with one line, never a traceback.
Commands import the library lazily so that ``prov --help`` stays fast.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from provenance import __version__
from provenance.errors import ProvError

INTERRUPTED = 130
"""Ctrl-C or SIGTERM ended the command (the shell's 128 + SIGINT)."""


class ProvGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        from provenance._internal import cancel

        try:
            with cancel.handling_signals():
                return super().invoke(ctx)
        except ProvError as error:
            if ctx.obj and ctx.obj.get("verbose"):
                import traceback

                traceback.print_exc(file=sys.stderr)
            from provenance.render.escape import block

            click.echo(block(error.diagnostics()), err=True)  # messages quote captured names
            ctx.exit(error.exit_code)
        except KeyboardInterrupt:
            _display(ctx).stop()
            click.echo("\ninterrupted: nothing was half-written; run the command again", err=True)
            if ctx.invoked_subcommand == "snapshot":
                click.echo("  hint: `prov gc` frees what it had stored so far", err=True)
            ctx.exit(INTERRUPTED)
        finally:
            _display(ctx).stop()


def _display(ctx: click.Context) -> Any:
    from provenance.cli._progress import Display

    obj = ctx.ensure_object(dict)
    display = obj.get("display")
    if display is None:
        display = obj["display"] = Display(quiet=bool(obj.get("quiet")))
    return display


@click.group(cls=ProvGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="prov")
@click.option("-v", "--verbose", is_flag=True, help="Log progress and show tracebacks.")
@click.option(
    "-q", "--quiet", is_flag=True, help="No progress on stderr (only warnings and errors)."
)
@click.pass_context
def cli(ctx: click.Context, verbose: bool, quiet: bool) -> None:
    """prov: provenance snapshots and attestations for open ML training runs.

    \b
    Exit codes: 0 success, 1 a negative result (verification failed, differences
    found, a claim failed), 2 usage error, 3 could not run, 4 snapshot written but
    some sources failed (partial), 130 interrupted (Ctrl-C, SIGTERM).

    Progress goes to stderr; on a terminal, work running longer than two seconds
    shows what it waits for, how long and how many bytes so far.
    """
    import logging  # here, not at the top: `prov --help` does not need it

    ctx.ensure_object(dict)
    ctx.obj["verbose"] = verbose
    ctx.obj["quiet"] = quiet
    _display(ctx).start()  # shows only what runs longer than two seconds, on a terminal
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


def progress(ctx: click.Context) -> Any:
    """The command's progress display (``cli._progress.Display``), started by ``cli``."""
    return _display(ctx)


from provenance.cli import (  # noqa: E402
    compare,
    export,
    gc,
    inspect,
    oci,
    pack,
    prove,
    release,
    setup,
    site,
    snapshot,
    verify,
    witness,
)

for command in (
    setup.init,
    setup.keygen,
    snapshot.snapshot,
    verify.verify,
    inspect.show,
    inspect.log,
    inspect.fsck,
    gc.gc,
    prove.prove,
    oci.push,
    compare.diff,
    compare.check,
    compare.note,
    compare.report,
    pack.pack,
    release.release_upload,
    release.release_previous,
    release.release_download,
    export.export_warc,
    witness.recheck,
    witness.witness,
    site.site,
):
    cli.add_command(command)


def main() -> None:
    try:
        cli(prog_name="prov")
    except SystemExit as end:
        if end.code == INTERRUPTED:
            _leave_now()
        raise


def _leave_now() -> None:
    """After an interruption, do not wait for a thread still blocked in a source.

    The interpreter would join every worker thread before exiting; one stuck in a read that
    nothing could abort would hold the exit for as long as its server. What it may still be
    writing is a store temp file, which is never visible and is swept by the next writer.
    """
    import os
    import threading

    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    if any(t.is_alive() and not t.daemon for t in others):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(INTERRUPTED)

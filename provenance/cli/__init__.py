"""The ``prov`` command line: a thin shell over the library.

This is the one place that catches ``ProvError``: it prints the diagnostics to stderr and exits
with the error's code. Commands import the library lazily so that ``prov --help`` stays fast.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from provenance import __version__
from provenance.errors import ProvError


class ProvGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ProvError as error:
            if ctx.obj and ctx.obj.get("verbose"):
                import traceback

                traceback.print_exc(file=sys.stderr)
            from provenance.render.escape import block

            click.echo(block(error.diagnostics()), err=True)  # messages quote captured names
            ctx.exit(error.exit_code)


@click.group(cls=ProvGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="prov")
@click.option("-v", "--verbose", is_flag=True, help="Log progress and show tracebacks.")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """prov: provenance snapshots and attestations for open ML training runs.

    \b
    Exit codes: 0 success, 1 a negative result (verification failed, differences
    found, a claim failed), 2 usage error, 3 could not run, 4 snapshot written but
    some sources failed (partial).
    """
    import logging  # here, not at the top: `prov --help` does not need it

    ctx.ensure_object(dict)
    ctx.obj["verbose"] = verbose
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


from provenance.cli import (  # noqa: E402
    compare,
    export,
    inspect,
    oci,
    pack,
    release,
    setup,
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
):
    cli.add_command(command)


def main() -> None:
    cli(prog_name="prov")

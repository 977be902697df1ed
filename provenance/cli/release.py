"""``prov release-upload``, ``release-previous`` and ``release-download``: GitHub release assets."""

from __future__ import annotations

import os
from pathlib import Path

import click


@click.command("release-upload")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False))
@click.option("--tag", required=True, help="The release's tag.")
@click.option(
    "--repository",
    envvar="GITHUB_REPOSITORY",
    required=True,
    help="owner/name [env GITHUB_REPOSITORY].",
)
@click.option(
    "--on-existing",
    type=click.Choice(["replace", "skip", "fail"]),
    default="replace",
    show_default=True,
    help="What to do when the release already has an asset of that name.",
)
def release_upload(files: tuple[Path, ...], tag: str, repository: str, on_existing: str) -> None:
    """Upload attestations and packs to a GitHub release (GITHUB_API_URL, GITHUB_TOKEN).

    Attestations are named *.intoto.jsonl so that tools scanning releases find them.
    """
    from provenance.publish.release import GitHubReleases, upload_assets

    releases = GitHubReleases.from_env(repository, dict(os.environ))
    with releases.client:
        done = upload_assets(releases, tag, files, on_existing)  # type: ignore[arg-type]
    for item in done:
        click.echo(f"{item.action}: {item.name} ({item.size:,} bytes) {item.url or ''}".rstrip())


@click.command("release-previous")
@click.option("--tag", required=True, help="The current release's tag.")
@click.option("--repository", envvar="GITHUB_REPOSITORY", required=True)
@click.option("--suffix", default=".evidence.tar", show_default=True)
@click.option("-o", "--output-dir", type=click.Path(path_type=Path, file_okay=False), required=True)
@click.pass_context
def release_previous(
    ctx: click.Context, tag: str, repository: str, suffix: str, output_dir: Path
) -> None:
    """Download the previous release's asset ending in SUFFIX. Exit 1 when there is none."""
    from provenance.publish.release import GitHubReleases, previous_asset

    releases = GitHubReleases.from_env(repository, dict(os.environ))
    with releases.client:
        found = previous_asset(releases, tag, suffix, output_dir)
    if found is None:
        click.echo(f"no earlier release has an asset ending in {suffix}", err=True)
        ctx.exit(1)
    click.echo(str(found))


@click.command("release-download")
@click.option("--tag", required=True, help="The release's tag.")
@click.option("--repository", envvar="GITHUB_REPOSITORY", required=True, metavar="OWNER/NAME")
@click.option("--name", "asset_name", required=True, help="The asset's name.")
@click.option("-o", "--output-dir", type=click.Path(path_type=Path, file_okay=False), required=True)
def release_download(tag: str, repository: str, asset_name: str, output_dir: Path) -> None:
    """Download one asset of a release by name (e.g. to witness it) and print its path."""
    from provenance.publish.release import GitHubReleases, named_asset

    releases = GitHubReleases.from_env(repository, dict(os.environ))
    with releases.client:
        click.echo(str(named_asset(releases, tag, asset_name, output_dir)))

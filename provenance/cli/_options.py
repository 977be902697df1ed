"""Options shared by several commands."""

from __future__ import annotations

import enum
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class Format(enum.StrEnum):
    TEXT = "text"
    JSON = "json"


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
    return click.option(
        "--format",
        "output_format",
        type=click.Choice([f.value for f in Format]),
        default=Format.TEXT.value,
        show_default=True,
        help="Output format.",
    )(function)


def resolve_store_path(explicit: Path | None, configured: Path | None = None) -> Path:
    if explicit is not None:
        return explicit
    if env := os.environ.get("PROV_STORE"):
        return Path(env)
    if configured is not None:
        return configured
    if Path("prov.toml").is_file():
        from provenance import config
        from provenance.errors import ConfigError

        try:
            return config.load(Path("prov.toml")).store_path
        except ConfigError:  # a broken prov.toml must not stop `prov log` or `prov fsck`
            pass
    return Path(".prov")

"""prov.toml: where the store is and which sources to capture.

The file is read with ``tomllib`` and checked with pydantic. Each source table is kept with the
line numbers of its keys so that every complaint names the file and the line. The options of a
source are checked by its collector (``collectors.base.validate_source``): this module knows the
shape of the file, not the collectors.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from provenance.errors import ConfigError

CONFIG_NAME = "prov.toml"
_HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\"-]+)\s*\]\]?")
_KEY = re.compile(r"^\s*\"?([A-Za-z0-9_-]+)\"?\s*=")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StoreSection(_Section):
    """Where captured bytes are kept (content-addressed by blake3)."""

    path: str = Field(
        default=".prov", description="the store folder; `--store` and `PROV_STORE` override it"
    )


class AttestationsSection(_Section):
    """Where signed snapshots are written, one file per label."""

    dir: str = Field(default="attestations", description="the folder of `LABEL.intoto.jsonl` files")


class DefaultsSection(_Section):
    """Limits every source gets unless it sets its own."""

    timeout: float = Field(
        default=30.0, gt=0, allow_inf_nan=False, description="seconds per request"
    )
    concurrency: int = Field(
        default=8, ge=1, le=256, description="sources collected at once (1 to 256)"
    )
    retries: int = Field(
        default=3, ge=0, le=20, description="new tries after a transient failure (0 to 20)"
    )
    backoff: float = Field(default=0.5, ge=0, le=60, description="seconds before the first retry")


class _TopLevel(_Section):
    store: StoreSection = StoreSection()
    attestations: AttestationsSection = AttestationsSection()
    defaults: DefaultsSection = DefaultsSection()
    sources: list[dict[str, Any]] = Field(default_factory=list)


@dataclass(frozen=True)
class SourceSpec:
    """One ``[[sources]]`` table as written, with where it was written."""

    name: str
    kind: str
    table: dict[str, Any]
    file: Path
    line: int
    key_lines: dict[str, int] = field(default_factory=dict)

    def error(
        self, message: str, *, key: str | None = None, hint: str | None = None
    ) -> ConfigError:
        line = self.key_lines.get(key, self.line) if key else self.line
        where = f"{self.file}:{line}"
        subject = f"source {self.name!r}" + (f", field {key!r}" if key else "")
        return ConfigError(f"{where}: {subject}: {message}", hint=hint)


@dataclass(frozen=True)
class Config:
    path: Path
    store_path: Path
    attestations_dir: Path
    defaults: DefaultsSection
    sources: tuple[SourceSpec, ...]

    @property
    def base_dir(self) -> Path:
        return self.path.parent


def store_path(explicit: Path | None, configured: Path | None = None) -> Path:
    """The store a command uses: ``--store``, else ``PROV_STORE``, else the configured one,
    else ./prov.toml's, else ``.prov``."""
    if explicit is not None:
        return explicit
    if env := os.environ.get("PROV_STORE"):
        return Path(env)
    if configured is not None:
        return configured
    if Path("prov.toml").is_file():
        try:
            return load(Path("prov.toml")).store_path
        except ConfigError:  # a broken prov.toml must not stop `prov log` or `prov fsck`
            pass
    return Path(".prov")


def load(path: Path) -> Config:
    """Read and check a prov.toml. Raises ConfigError naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise ConfigError(
            f"no configuration file at {path}",
            hint="run `prov init` to write a template, or pass -c PATH",
        ) from e
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read {path}", cause=str(e)) from e
    return parse(text, path)


def parse(text: str, path: Path) -> Config:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}", hint="fix the syntax at that line") from e
    except RecursionError as e:  # tomllib recurses into nested arrays and inline tables
        raise ConfigError(f"{path}: not valid TOML: arrays or tables nest too deeply") from e
    lines = _Lines(text)
    try:
        top = _TopLevel.model_validate(raw)
    except ValidationError as e:
        error = e.errors()[0]
        section = ".".join(str(p) for p in error["loc"])
        line = lines.top_level(section)
        raise ConfigError(f"{path}:{line}: {section}: {_describe(error)}") from e

    sources: list[SourceSpec] = []
    seen: dict[str, int] = {}
    for index, table in enumerate(top.sources):
        header_line, key_lines = lines.source(index)
        for key in ("name", "kind"):
            value = table.get(key)
            if not isinstance(value, str) or not value:
                raise ConfigError(
                    f"{path}:{key_lines.get(key, header_line)}: source #{index + 1}: "
                    f"'{key}' is required and must be a non-empty string"
                )
        name = table["name"]
        if name in seen:
            raise ConfigError(
                f"{path}:{key_lines.get('name', header_line)}: duplicate source name {name!r} "
                f"(first defined at line {seen[name]})",
                hint="give every source a unique name: diffs and claims refer to sources by name",
            )
        seen[name] = key_lines.get("name", header_line)
        sources.append(SourceSpec(name, table["kind"], table, path, header_line, key_lines))

    base = path.parent
    return Config(
        path=path,
        store_path=base / top.store.path,
        attestations_dir=base / top.attestations.dir,
        defaults=top.defaults,
        sources=tuple(sources),
    )


def _describe(error: Any) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown key"
    if error["type"] == "missing":
        return "required field is missing"
    return str(error["msg"])


class _Lines:
    """Finds the line where a table or key was written (tomllib keeps no positions)."""

    def __init__(self, text: str) -> None:
        self.headers: list[tuple[int, str, bool]] = []  # (line, name, is_array)
        self.keys: list[tuple[int, str]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if header := _HEADER.match(line):
                self.headers.append((number, header.group(1).strip('"'), "[[" in line))
            elif key := _KEY.match(line):
                self.keys.append((number, key.group(1)))

    def _keys_between(self, start: int, end: int) -> dict[str, int]:
        found: dict[str, int] = {}
        for number, key in self.keys:
            if start < number < end:
                found.setdefault(key, number)
        return found

    def _end_of(self, start: int) -> int:
        later = [number for number, _, _ in self.headers if number > start]
        return min(later) if later else 1 << 30

    def source(self, index: int) -> tuple[int, dict[str, int]]:
        headers = [number for number, name, array in self.headers if name == "sources" and array]
        if index >= len(headers):
            return 1, {}
        start = headers[index]
        return start, self._keys_between(start, self._end_of(start))

    def top_level(self, dotted: str) -> int:
        section, _, key = dotted.partition(".")
        for number, name, _ in self.headers:
            if name == section:
                return self._keys_between(number, self._end_of(number)).get(key, number)
        first_header = self.headers[0][0] if self.headers else 1 << 30
        return self._keys_between(0, first_header).get(section, 1)


TEMPLATE = """\
# prov.toml: the sources prov captures at each milestone. See `prov --help`.
# Every key of every source kind, with its type and default: docs/config.md in prov's repository.

[store]
path = ".prov"              # content-addressed store (or set PROV_STORE)

[attestations]
dir = "attestations"        # where signed statements are written

[defaults]
timeout = 30                # seconds per request
concurrency = 8             # sources collected at once

[[sources]]
name = "code"
kind = "git"
repo = "."                  # a local path or a URL
ref = "HEAD"                # a branch, a tag or a commit sha
# paths = ["src/"]          # default: every file in the commit

# [[sources]]
# name = "run"
# kind = "wandb"
# run = "entity/project/run_id"   # key from WANDB_API_KEY or ~/.netrc; or path = "wandb/run-..."
#
# [[sources]]
# name = "data-card"
# kind = "huggingface"
# repo = "org/name"
# repo_type = "dataset"           # model | dataset | space
# revision = "main"               # resolved to its commit sha
# files = ["README.md"]           # downloaded and hashed
#
# [[sources]]
# name = "endpoint"
# kind = "http"
# url = "https://example.org/artifact.json"
# # headers = { Authorization = "Bearer ${MY_TOKEN}" }   # recorded redacted
"""

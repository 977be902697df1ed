"""The collector interface and the registry of collectors by ``kind``.

A collector observes one source and returns a ``Capture``; it never signs. Adding a kind means
adding one module with a ``Collector`` subclass and one line in ``REGISTRY``. Modules are imported
only when a source of their kind is used, so heavy clients load only where needed.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from provenance import __version__
from provenance.config import SourceSpec
from provenance.errors import ConfigError
from provenance.model import BlobRef, Capture, CaptureError, Establishes, utc_now
from provenance.store.objects import Store

REGISTRY: dict[str, str] = {
    "git": "provenance.capture.git:GitCollector",
    "oci": "provenance.capture.oci:OciCollector",
    "listing": "provenance.capture.listing:ListingCollector",
    "wandb": "provenance.capture.wandb:WandbCollector",
    "huggingface": "provenance.capture.huggingface:HuggingFaceCollector",
    "http": "provenance.capture.http:HttpCollector",
}


class SourceOptions(BaseModel):
    """Options every source accepts; each collector extends this with its own."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="unique in prov.toml: diffs and claims name sources by it")
    kind: str = Field(description="which collector: " + ", ".join(f"`{k}`" for k in REGISTRY))
    timeout: float | None = Field(
        default=None, gt=0, allow_inf_nan=False, description="seconds; overrides [defaults]"
    )
    retries: int | None = Field(default=None, ge=0, le=20, description="overrides [defaults]")
    volatile: list[str] = Field(default_factory=list, description="extra volatile paths for diff")


@dataclass
class CollectContext:
    """What a collector may use: the store, limits, the environment and the config's folder."""

    store: Store
    base_dir: Path
    timeout: float = 30.0
    retries: int = 3
    env: Mapping[str, str] = field(default_factory=dict)
    backoff: float = 0.5
    progress: Callable[[str], None] | None = None


class Collector(ABC):
    kind: ClassVar[str]
    options_model: ClassVar[type[SourceOptions]] = SourceOptions

    def __init__(self, options: SourceOptions, context: CollectContext) -> None:
        self.options = options
        self.context = context

    @property
    def timeout(self) -> float:
        return self.options.timeout or self.context.timeout

    @property
    def retries(self) -> int:
        return self.context.retries if self.options.retries is None else self.options.retries

    @abstractmethod
    def collect(self) -> Capture:
        """Observe the source once. Remote failures are returned as a failed capture."""

    @classmethod
    def warnings(cls, capture: Capture) -> list[str]:
        """What to tell a person about a capture that succeeded, yet may mislead (none here)."""
        return []


def collector_class(kind: str) -> type[Collector]:
    target = REGISTRY.get(kind)
    if target is None:
        raise KeyError(kind)
    module_name, _, class_name = target.partition(":")
    cls: type[Collector] = getattr(importlib.import_module(module_name), class_name)
    return cls


def validate_source(spec: SourceSpec) -> tuple[type[Collector], SourceOptions]:
    """Check a source table against its collector's options; errors name the file and line."""
    try:
        cls = collector_class(spec.kind)
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise spec.error(
            f"unknown kind {spec.kind!r}", key="kind", hint=f"known kinds: {known}"
        ) from None
    try:
        options = cls.options_model.model_validate(spec.table)
    except ValidationError as e:
        error = e.errors()[0]
        key = str(error["loc"][0]) if error["loc"] else None
        if error["type"] == "extra_forbidden":
            allowed = ", ".join(sorted(cls.options_model.model_fields))
            raise spec.error(
                "unknown key", key=key, hint=f"a {spec.kind} source takes: {allowed}"
            ) from e
        message = "required field is missing" if error["type"] == "missing" else error["msg"]
        if error["type"] == "value_error":  # our validators' own words, without pydantic's prefix
            message = str(error["ctx"]["error"])
        raise spec.error(message, key=key) from e
    except ConfigError:
        raise
    return cls, options


class Recorder:
    """Builds one capture: keeps blobs in the store as they arrive, then seals the record."""

    def __init__(self, collector: Collector, request: dict[str, Any]) -> None:
        self.source = collector.options.name
        self.kind = collector.kind
        self.store = collector.context.store
        # Diff reads snapshots, never prov.toml: a source's extra volatile paths travel with
        # the capture so that any auditor's `prov diff` applies them.
        volatile = list(collector.options.volatile)
        self.request = {**request, "volatile": volatile} if volatile else request
        self.started = utc_now()
        self.blobs: list[BlobRef] = []
        self.attempts: list[dict[str, Any]] = []

    def keep(self, name: str, data: bytes, media_type: str | None = None) -> BlobRef:
        written = self.store.put_bytes(data)
        return self.add_blob(name, str(written.digest), written.size, media_type)

    def add_blob(self, name: str, digest: str, size: int, media_type: str | None = None) -> BlobRef:
        ref = BlobRef(name=name, digest=digest, size=size, media_type=media_type)
        self.blobs.append(ref)
        return ref

    def finish(
        self,
        data: dict[str, Any],
        establishes: tuple[Establishes, ...] = ("observed",),
        error: CaptureError | None = None,
    ) -> Capture:
        blobs = [blob.model_dump(mode="json") for blob in self.blobs]
        error_json = error.model_dump(mode="json") if error else None
        return Capture(
            source=self.source,
            kind=self.kind,
            tool_version=__version__,
            started=self.started,
            ended=utc_now(),
            request=self.request,
            status="failed" if error else "ok",
            establishes=establishes,
            data=data,
            blobs=tuple(self.blobs),
            error=error,
            attempts=tuple(self.attempts),
            digest=Capture.content_digest(self.kind, self.request, data, blobs, error_json),
        )

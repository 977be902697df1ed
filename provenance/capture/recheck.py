"""Re-collecting what a snapshot recorded: each capture turned back into the source that made it.

``prov recheck`` and ``prov witness`` need no prov.toml. A capture's ``request`` names what was
asked for (the kind, the URL or repository, the ref or revision, paths, files, the endpoint), and
that is enough to ask again. What a request does not record is left at the collector's default
(timeouts, size limits) or comes from the rechecker's environment (``WANDB_API_KEY``,
``HF_TOKEN``, ``SSL_CERT_FILE``), never from the snapshot. A request that held a credential was
redacted before it was signed: it cannot be replayed, and the source says so rather than asking
for something else.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from provenance import __version__
from provenance._internal.progress import task
from provenance._internal.redact import REDACTED
from provenance.capture.base import CollectContext, Collector, SourceOptions, collector_class
from provenance.capture.snapshot import run_parallel
from provenance.errors import CollectorError, ProvError, SourceGoneError
from provenance.model import Capture, CaptureError, Snapshot, utc_now

__all__ = ["Recollected", "is_gone", "options_for", "recollect"]

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Recollected:
    """One source asked again: the capture the snapshot holds and the one made now."""

    original: Capture
    fresh: Capture
    gone: bool = False
    """The collector found that what was asked for no longer exists (a ref, a revision)."""
    replayed: bool = True
    """False when the request could not be asked again (``fresh`` then records why)."""
    attested_commit_gone: bool | None = None
    """When a branch or revision now names another commit: whether the commit the snapshot
    recorded is gone from the source (a force-push), or still there (None: not asked)."""


def _http(request: dict[str, Any]) -> dict[str, Any]:
    headers = request.get("headers") or []
    table = dict(request)
    table["headers"] = {str(pair[0]): str(pair[1]) for pair in headers if len(pair) == 2}
    return table


_ADAPT: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {"http": _http}
"""Kinds whose request spells an option differently from prov.toml (http keeps header pairs)."""


def _redacted(value: Any) -> bool:
    if isinstance(value, str):
        return REDACTED in value
    if isinstance(value, dict):
        return any(_redacted(v) for v in value.values())
    if isinstance(value, list):
        return any(_redacted(v) for v in value)
    return False


def options_for(capture: Capture) -> tuple[type[Collector], SourceOptions]:
    """The collector and options that ask again what ``capture`` asked, or CollectorError."""
    where = f"source {capture.source!r} ({capture.kind})"
    try:
        cls = collector_class(capture.kind)
    except KeyError:
        raise CollectorError(
            f"{where}: prov {__version__} has no collector of this kind",
            hint="recheck with the prov version that made the snapshot",
        ) from None
    fields = cls.options_model.model_fields
    request = _ADAPT.get(capture.kind, dict)(capture.request)
    table = {k: v for k, v in request.items() if k in fields and k not in ("name", "kind")}
    table.update(name=capture.source, kind=capture.kind)
    if _redacted(table):
        raise CollectorError(
            f"{where}: the recorded request held a credential, redacted before signing",
            hint="a request with a secret in its URL or headers cannot be replayed from the "
            "snapshot; capture it with a prov.toml of your own",
        )
    try:
        return cls, cls.options_model.model_validate(table)
    except ValidationError as e:
        raise CollectorError(
            f"{where}: the recorded request is not one this prov can ask again",
            cause=str(e.errors()[0].get("msg")),
        ) from e


def _failed(original: Capture, error: CaptureError, started: str) -> Capture:
    """A capture that records why nothing could be observed, in the original's request."""
    request = dict(original.request)
    error_json = error.model_dump(mode="json")
    return Capture(
        source=original.source,
        kind=original.kind,
        tool_version=__version__,
        started=started,
        ended=utc_now(),
        request=request,
        status="failed",
        establishes=(),
        error=error,
        digest=Capture.content_digest(original.kind, request, {}, [], error_json),
    )


_PINNED = {"git": "ref", "huggingface": "revision"}
"""Kinds whose request names a ref that may move, and the option that pins it to a commit."""


def _moved_commit(original: Capture, fresh: Capture) -> str | None:
    """The commit the snapshot recorded, when the ref asked for now names another one."""
    key = _PINNED.get(original.kind)
    commit = original.data.get("commit")
    if key is None or not isinstance(commit, str) or fresh.status != "ok":
        return None
    if original.request.get(key) == commit or fresh.data.get("commit") == commit:
        return None
    return commit


def commit_gone(original: Capture, commit: str, context: CollectContext) -> bool | None:
    """Ask for the recorded commit itself: gone (True), still there (False), or unknown (None:
    the question itself failed, say on a timeout)."""
    pinned = original.model_copy(
        update={"request": {**original.request, _PINNED[original.kind]: commit}}
    )
    probe = recollect_one(pinned, context, follow=False)
    if probe.gone or is_gone(probe.fresh):
        return True
    return False if probe.fresh.status == "ok" else None


def is_gone(capture: Capture) -> bool:
    """The capture says that what was asked for does not exist (404 / 410, not found)."""
    error = capture.error
    if error is not None:
        status = error.detail.get("status")
        return error.type == "not-found" or (error.type == "http-status" and status in (404, 410))
    return capture.kind == "http" and capture.data.get("status") in (404, 410)


def recollect_one(
    original: Capture, context: CollectContext, *, follow: bool = True
) -> Recollected:
    """Ask one source again. A collector's own failure becomes a failed capture, not a crash."""
    started = utc_now()
    try:
        cls, options = options_for(original)
    except CollectorError as e:
        error = CaptureError(type="not-replayable", message=e.message)
        return Recollected(original, _failed(original, error, started), replayed=False)
    try:
        fresh = cls(options, context).collect()
        moved = _moved_commit(original, fresh) if follow else None
        gone = commit_gone(original, moved, context) if moved else None
        return Recollected(original, fresh, attested_commit_gone=gone)
    except SourceGoneError as e:
        error = CaptureError(type="not-found", message=e.message)
        return Recollected(original, _failed(original, error, started), gone=True)
    except ProvError as e:
        error = CaptureError(type="collector", message=e.message)
        return Recollected(original, _failed(original, error, started))


def recollect(
    snapshot: Snapshot,
    context: CollectContext,
    *,
    concurrency: int = 6,
    progress: Progress | None = None,
) -> list[Recollected]:
    """Every capture of ``snapshot`` asked again, in the snapshot's order."""
    captures = list(snapshot.captures)
    lock = threading.Lock()
    done = 0

    def run(capture: Capture) -> Recollected:
        nonlocal done
        with task(f"{capture.source} [{capture.kind}]"):
            result = recollect_one(capture, context)
        if progress:
            with lock:
                done += 1
                count = done
            state = "ok" if result.fresh.status == "ok" else "failed"
            progress(f"  [{count}/{len(captures)}] {capture.source} [{capture.kind}]: {state}")
        return result

    return run_parallel(run, captures, concurrency, "prov-recheck")

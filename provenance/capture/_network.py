"""What the network collectors (wandb, huggingface, http) share: secrets, policy, parsing.

Not a collector kind itself (it is not in the registry); it imports httpx only through
``provenance.capture._http``, which the collectors import when they run.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from provenance._internal import redact
from provenance.capture.base import Collector
from provenance.model import CaptureError

TOKEN_VARIABLES = ("WANDB_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
"""Credentials prov itself may send; their values are scrubbed from everything kept."""

_HTTP_URL = re.compile(r"^https?://[^/\s?#]+", re.IGNORECASE)


def scrubber(env: Mapping[str, str]) -> redact.Scrubber:
    """A scrubber that already knows every token in the environment."""
    return redact.Scrubber(env.get(name) for name in TOKEN_VARIABLES)


def check_http_url(value: str, what: str = "URL") -> str:
    """Accept http(s) URLs with a host; the message never repeats the value (it may be signed)."""
    if not _HTTP_URL.match(value) or any(c.isspace() for c in value):
        scheme = value.split(":", 1)[0] if ":" in value else ""
        shown = f"the scheme {scheme!r}" if scheme and scheme.isalpha() else "it"
        raise ValueError(
            f"the {what} must be an http:// or https:// URL with a host ({shown} is not)"
        )
    return value


def policy(collector: Collector, **changes: Any) -> Any:
    """The HTTP policy for a collector's source: its timeout and retries, the context's backoff."""
    from provenance.capture._http import Policy

    return Policy(
        timeout=collector.timeout,
        retries=collector.retries,
        backoff=collector.context.backoff,
        **changes,
    )


class NetworkCollector(Collector):
    """A collector that talks HTTP. ``http_client`` may be set to an ``httpx.Client`` of one's
    own (event hooks, a proxy, a transport); it must not follow redirects, which prov does itself
    to record every hop. Left ``None``, a client is made from the source's policy."""

    http_client: Any = None


def fetcher(collector: Collector, scrub: redact.Scrubber, policy: Any) -> Any:
    from provenance.capture._http import Fetcher

    return Fetcher(
        policy,
        collector.context.store,
        scrub,
        env=collector.context.env,
        client=getattr(collector, "http_client", None),
        notify=collector.context.progress,
        label=collector.options.name,
    )


def status_error(exchange: Any, what: str) -> CaptureError:
    """An API answered with an error status: the run or repo could not be captured."""
    response = exchange.response
    detail: dict[str, Any] = {"status": response.status, "reason": response.reason}
    for header in ("x-error-code", "x-error-message", "retry-after", "www-authenticate"):
        value = response.header(header)
        if value is not None:
            detail[header.replace("-", "_")] = value
    detail["attempts"] = len(exchange.attempts)
    code = f" ({detail['x_error_code']})" if "x_error_code" in detail else ""
    still = " after every retry" if exchange.exhausted and len(exchange.attempts) > 1 else ""
    return CaptureError(
        type="http-status",
        message=f"{what}: HTTP {response.status} {response.reason}{code}{still}",
        detail=detail,
    )


def _constant(name: str) -> str:
    # NaN and the infinities are not JSON; W&B summaries hold them anyway. They are kept as
    # their names (strings), so a capture never silently turns them into null or a number.
    return name


def loads(data: bytes | str) -> Any:
    """Parse JSON keeping integers exact and NaN / Infinity as strings.

    Anything unparseable raises ValueError, which every caller handles: JSON nested deeper
    than Python's recursion limit too (a server can send ``[[[[...`` a million deep).
    """
    try:
        return json.loads(data, parse_constant=_constant)
    except RecursionError as e:
        raise ValueError("the JSON nests too deeply to be parsed") from e


def jsonable(value: Any) -> Any:
    """A YAML-loaded value as JSON: string keys, ISO dates, non-finite floats as their names."""
    if isinstance(value, dict):
        return {_key(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if hasattr(value, "isoformat"):
        return str(value.isoformat())
    return value


def _key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return str(key)


def local_path(collector: Collector, value: str) -> Path:
    return (collector.context.base_dir / value).expanduser()

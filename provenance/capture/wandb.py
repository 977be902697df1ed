"""The wandb collector: a W&B run through the public GraphQL API, or a local run directory.

The API is asked the same ``Run`` query the W&B client sends (``POST {WANDB_BASE_URL}/graphql``,
``Authorization: Basic base64("api:" + key)`` with the key from ``WANDB_API_KEY`` or netrc).
Its ``config``, ``summaryMetrics`` and ``systemMetrics`` arrive as JSON strings; the config is
unwrapped (``{"value": X, "desc": ...}`` -> ``X``) with ``_wandb`` and ``wandb_version`` kept
apart, exactly as the client does. JSON is parsed by the standard library, whose integers are
exact (535477106688 stays an int; nothing goes through protobuf's float-only ``Struct``).

A run directory is read from ``files/config.yaml`` (the old ``wandb_version: 1`` + ``desc``
format and the new one give the same config), ``wandb-summary.json`` and ``wandb-metadata.json``.
"""

from __future__ import annotations

import base64
import netrc
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field, ValidationInfo, field_validator

from provenance._internal import canonical, documents, redact
from provenance.capture import _network
from provenance.capture.base import Recorder, SourceOptions
from provenance.errors import CollectorError
from provenance.model import Capture, CaptureError, Establishes

DEFAULT_BASE_URL = "https://api.wandb.ai"
_RUN_PATH = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_. -]+/[A-Za-z0-9_.?=-]+$")
_RUN_DIR = re.compile(r"^(?:offline-)?run-\d{8}_\d{6}-(?P<id>[A-Za-z0-9]+)$")
_INTERNAL_KEYS = ("_wandb", "wandb_version")
_API_LIMIT = 64 << 20

RUN_QUERY = """\
query Run($project: String!, $entity: String!, $name: String!) {
    project(name: $project, entityName: $entity) {
        run(name: $name) {
            id
            name
            displayName
            state
            config
            group
            jobType
            commit
            tags
            sweepName
            readOnly
            createdAt
            heartbeatAt
            description
            notes
            systemMetrics
            summaryMetrics
            historyLineCount
            historyKeys
            user {
                name
                username
            }
        }
    }
}
"""


class WandbOptions(SourceOptions):
    """A Weights & Biases run (from the API or a local run folder): config and summary."""

    run: str | None = Field(default=None, description="entity/project/run_id")
    path: str | None = Field(
        default=None, validate_default=True, description="a local run directory instead"
    )
    base_url: str | None = Field(default=None, description="overrides WANDB_BASE_URL")

    @field_validator("run")
    @classmethod
    def _run(cls, value: str | None) -> str | None:
        if value is not None and not _RUN_PATH.match(value):
            raise ValueError(
                "a run path is entity/project/run_id (three parts separated by '/', "
                "e.g. marin-community/marin_moe/hero-12d8b6f0-dee637)"
            )
        return value

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        return None if value is None else _network.check_http_url(value, "base_url")

    @field_validator("path")
    @classmethod
    def _path(cls, value: str | None, info: ValidationInfo) -> str | None:
        if "run" not in info.data:
            return value  # `run` itself was invalid, and that is the error to report
        if value is not None and info.data["run"] is not None:
            raise ValueError("give either run (the API) or path (a local directory), not both")
        if value is None and info.data["run"] is None:
            raise ValueError(
                "say what to capture: run = 'entity/project/run_id' or path = a run directory"
            )
        return value


class WandbCollector(_network.NetworkCollector):
    kind = "wandb"
    options_model = WandbOptions
    options: WandbOptions

    def collect(self) -> Capture:
        if self.options.path is not None:
            return self._collect_directory(self.options.path)
        assert self.options.run is not None
        return self._collect_api(self.options.run)

    # -- the GraphQL API -----------------------------------------------------------------------

    def _collect_api(self, run_path: str) -> Capture:
        env = self.context.env
        base_url = (self.options.base_url or env.get("WANDB_BASE_URL") or DEFAULT_BASE_URL).rstrip(
            "/"
        )
        scrub = _network.scrubber(env)
        key = env.get("WANDB_API_KEY") or self._netrc_key(base_url, scrub)
        entity, project, name = run_path.split("/", 2)
        payload = canonical.dumps(
            {
                "operationName": "Run",
                "query": RUN_QUERY,
                "variables": {"entity": entity, "project": project, "name": name},
            }
        )
        request: dict[str, Any] = {
            "run": run_path,
            "base_url": scrub.text(redact.url_minimal(base_url)),
            "operation": "Run",
            "authenticated": key is not None,
        }
        recorder = Recorder(self, request)
        recorder.keep("graphql-request.json", payload, "application/json")
        headers = [("Content-Type", "application/json"), ("Accept", "application/json")]
        if key is not None:
            scrub.add(key)
            credential = "Basic " + base64.b64encode(f"api:{key}".encode()).decode()
            headers.append(("Authorization", credential))
        data: dict[str, Any] = {
            "run_path": run_path,
            "origin": "api",
            "run": None,
            "config": {},
            "config_internal": {},
            "summary": {},
            "system_metrics": {},
            "tls": None,
        }
        policy = _network.policy(self, max_body_bytes=_API_LIMIT)
        with _network.fetcher(self, scrub, policy) as fetcher:
            exchange = fetcher.fetch(
                "POST", f"{base_url}/graphql", headers=headers, content=payload
            )
            recorder.attempts = exchange.attempts
            response = exchange.response
            if response is not None and response.body is not None:
                recorder.add_blob(
                    "graphql-response.json",
                    response.body.digest,
                    response.body.size,
                    response.media_type,
                )
                data["tls"] = response.tls
            if exchange.error is not None:
                return recorder.finish(data, (), exchange.error)
            assert response is not None and response.body is not None
            what = f"W&B run {run_path}"
            if response.status != 200:
                error = _network.status_error(exchange, what)
                detail: dict[str, Any] = dict(error.detail)
                messages = _graphql_errors(_content(fetcher, response))
                if messages:
                    detail["errors"] = messages
                return recorder.finish(data, (), error.model_copy(update={"detail": detail}))
            if response.body.truncated:
                return recorder.finish(
                    data,
                    (),
                    CaptureError(
                        type="body-too-large",
                        message=f"{what}: the API answer is larger than {_API_LIMIT} bytes",
                    ),
                )
            try:
                raw = fetcher.content(response)
                document = _network.loads(raw)
            except (ValueError, UnicodeDecodeError) as e:
                error = CaptureError(type="decode", message=f"{what}: the answer is not JSON: {e}")
                return recorder.finish(data, (), error)
        establishes: tuple[Establishes, ...] = (
            ("observed", "tls-bound") if exchange.tls_bound else ("observed",)
        )
        run = _dig(document, "data", "project", "run")
        if run is None or not isinstance(run, dict):
            messages = _graphql_errors(raw)
            if messages:
                error = CaptureError(
                    type="api-error",
                    message=f"{what}: {'; '.join(messages)}",
                    detail={"errors": messages},
                )
            elif _dig(document, "data", "project") is None:
                error = CaptureError(
                    type="not-found", message=f"{what}: project {entity}/{project} not found"
                )
            else:
                error = CaptureError(
                    type="not-found", message=f"{what}: no run {name!r} in {entity}/{project}"
                )
            return recorder.finish(data, establishes, error)
        try:
            data.update(_run_data(run))
        except ValueError as e:
            error = CaptureError(type="decode", message=f"{what}: {e}")
            return recorder.finish(data, establishes, error)
        return recorder.finish(data, establishes)

    def _netrc_key(self, base_url: str, scrub: redact.Scrubber) -> str | None:
        """The key the W&B client would take from netrc for this host (login ignored)."""
        env = self.context.env
        location = env.get("NETRC") or (
            str(Path(env["HOME"]) / ".netrc") if "HOME" in env else None
        )
        if location is None or not Path(location).is_file():
            return None
        try:
            entries = netrc.netrc(location)
        except (netrc.NetrcParseError, OSError) as e:
            raise CollectorError(
                f"source {self.options.name!r}: cannot read {location}",
                cause=str(e).splitlines()[0] if str(e) else None,
                hint="fix the netrc file, or set WANDB_API_KEY",
            ) from None
        parts = urlsplit(base_url)
        for host in (parts.netloc, parts.hostname or ""):
            found = entries.authenticators(host)
            if found and found[2]:
                scrub.add(found[2])
                return found[2]
        return None

    # -- a local run directory -----------------------------------------------------------------

    def _collect_directory(self, given: str) -> Capture:
        root = _network.local_path(self, given)
        files = root / "files" if (root / "files" / "config.yaml").is_file() else root
        if not (files / "config.yaml").is_file():
            raise CollectorError(
                f"source {self.options.name!r}: no files/config.yaml under {root}",
                hint="point `path` at a W&B run directory (wandb/run-<date>-<id>) or its files/",
            )
        scrub = _network.scrubber(self.context.env)
        recorder = Recorder(self, {"path": given})
        raw: dict[str, bytes] = {}
        missing: list[str] = []
        for name in ("config.yaml", "wandb-summary.json", "wandb-metadata.json"):
            path = files / name
            if path.is_file():
                content, _ = scrub.bytes(path.read_bytes())
                raw[name] = content
                media = "application/yaml" if name.endswith(".yaml") else "application/json"
                recorder.keep(f"files/{name}", content, media)
            else:
                missing.append(f"files/{name}")
        try:
            config, internal = unwrap_config(load_config_yaml(raw["config.yaml"]))
            summary = (
                _network.loads(raw["wandb-summary.json"]) if "wandb-summary.json" in raw else {}
            )
            metadata = (
                _network.loads(raw["wandb-metadata.json"]) if "wandb-metadata.json" in raw else {}
            )
        except (ValueError, UnicodeDecodeError) as e:
            raise CollectorError(
                f"source {self.options.name!r}: cannot parse the run files in {files}",
                cause=str(e).splitlines()[0],
            ) from e
        run_id = _RUN_DIR.match(root.resolve().name)
        git = metadata.get("git") if isinstance(metadata, dict) else None
        last_step = summary.get("_step") if isinstance(summary, dict) else None
        data: dict[str, Any] = {
            "run_path": None,
            "origin": "directory",
            "run": {
                "id": run_id.group("id") if run_id else None,
                "storage_id": None,
                "display_name": None,
                "state": None,
                "group": None,
                "job_type": None,
                "tags": [],
                "created_at": metadata.get("startedAt") if isinstance(metadata, dict) else None,
                "heartbeat_at": None,
                "last_step": last_step if isinstance(last_step, int) else None,
                "history_line_count": None,
                "commit": git.get("commit") if isinstance(git, dict) else None,
                "user": None,
            },
            "config": config,
            "config_internal": internal,
            "summary": summary if isinstance(summary, dict) else {},
            "system_metrics": {},
            "metadata": metadata if isinstance(metadata, dict) else {},
            "missing_files": missing,
        }
        return recorder.finish(scrub.json(data), ("observed",))


def unwrap_config(raw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """W&B's stored config -> (config, internals), as the W&B client's ``Run`` does it.

    Entries are ``{"value": X}`` (older clients: ``{"desc": ..., "value": X}``) and become ``X``;
    ``_wandb`` and ``wandb_version`` (a bare ``1`` in the old format) go to the internals.
    """
    if not isinstance(raw, dict):
        raise ValueError(f"the config is a {type(raw).__name__}, not an object")
    config: dict[str, Any] = {}
    internal: dict[str, Any] = {}
    for key, entry in raw.items():
        value = entry["value"] if isinstance(entry, dict) and "value" in entry else entry
        (internal if key in _INTERNAL_KEYS else config)[key] = value
    return config, internal


def load_config_yaml(content: bytes) -> Any:
    """Read a run's config.yaml as YAML 1.2 numbers, then make it JSON-shaped.

    W&B's Go core writes ``5e-05``, which YAML 1.1 (PyYAML's default) reads as a string; the
    loader below adds YAML 1.2's float pattern so a number stays a number.
    """
    # A config.yaml is anyone's bytes: aliases are bounded as in every captured document.
    return _network.jsonable(documents.load_yaml(content, _loader()))


_LOADER: Any = None


def _loader() -> Any:
    global _LOADER
    if _LOADER is None:
        import yaml

        class Yaml12Loader(yaml.SafeLoader):
            pass

        Yaml12Loader.add_implicit_resolver(
            "tag:yaml.org,2002:float",
            re.compile(
                r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$|^[-+]?\.[0-9_]+(?:[eE][-+]?[0-9]+)?$"
            ),
            list("-+0123456789."),
        )
        _LOADER = Yaml12Loader
    return _LOADER


def _run_data(run: dict[str, Any]) -> dict[str, Any]:
    config_raw = _json_field(run.get("config"), "config")
    config, internal = unwrap_config(config_raw if config_raw is not None else {})
    summary = _json_field(run.get("summaryMetrics"), "summaryMetrics") or {}
    system = _json_field(run.get("systemMetrics"), "systemMetrics") or {}
    history = _json_field(run.get("historyKeys"), "historyKeys")
    last_step = history.get("lastStep") if isinstance(history, dict) else None
    if last_step is None and isinstance(summary, dict):
        last_step = summary.get("_step")
    user = run.get("user") if isinstance(run.get("user"), dict) else None
    return {
        "run": {
            "id": run.get("name"),
            "storage_id": run.get("id"),
            "display_name": run.get("displayName"),
            "state": run.get("state"),
            "group": run.get("group"),
            "job_type": run.get("jobType"),
            "tags": list(run.get("tags") or []),
            "created_at": run.get("createdAt"),
            "heartbeat_at": run.get("heartbeatAt"),
            "last_step": last_step,
            "history_line_count": run.get("historyLineCount"),
            "commit": run.get("commit"),
            "user": (user.get("username") or user.get("name")) if user else None,
            "description": run.get("description"),
            "notes": run.get("notes"),
            "sweep": run.get("sweepName"),
        },
        "config": config,
        "config_internal": internal,
        "summary": summary,
        "system_metrics": system,
    }


def _json_field(value: Any, name: str) -> Any:
    """W&B sends JSON-typed fields as strings; some servers send them as objects."""
    if isinstance(value, str):
        try:
            return _network.loads(value)
        except ValueError as e:
            raise ValueError(f"the run's {name} is not valid JSON: {e}") from e
    return value


def _content(fetcher: Any, response: Any) -> bytes:
    try:
        return bytes(fetcher.content(response))
    except ValueError:
        return b""


def _dig(document: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(document, dict):
            return None
        document = document.get(key)
    return document


def _graphql_errors(raw: bytes) -> list[str]:
    try:
        document = _network.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return []
    errors = document.get("errors") if isinstance(document, dict) else None
    if not isinstance(errors, list):
        return []
    return [str(e.get("message")) for e in errors if isinstance(e, dict) and e.get("message")]

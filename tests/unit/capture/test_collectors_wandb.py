"""The wandb collector: the GraphQL API on a real local server, and local run directories."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from provenance._testing.fixtures import Fixtures
from provenance._testing.server import LocalServer, wandb_auth
from provenance.capture.wandb import _run_data, load_config_yaml, unwrap_config
from provenance.digest import Digest
from provenance.model import Capture
from provenance.store.objects import Store

HERO = "marin-community/marin_moe/hero-12d8b6f0-dee637"
Collect = Callable[..., Capture]


def wandb(run: str = HERO, **options: Any) -> dict[str, Any]:
    return {"name": "hero-run", "kind": "wandb", "run": run, **options}


def api_env(server: LocalServer, fixtures: Fixtures) -> dict[str, str]:
    assert fixtures.wandb_api_key is not None
    return {"WANDB_BASE_URL": server.url, "WANDB_API_KEY": fixtures.wandb_api_key}


def test_a_run_through_the_api_keeps_state_heartbeat_config_and_exact_integers(
    collect: Collect, marin_server: LocalServer, marin_fixtures: Fixtures, tmp_path: Path
) -> None:
    capture = collect(wandb(), env=api_env(marin_server, marin_fixtures))

    assert capture.status == "ok", capture.error
    data = capture.data
    run = data["run"]
    assert isinstance(run, dict)
    assert run["state"] == "running"
    assert run["id"] == "hero-12d8b6f0-dee637"
    assert run["created_at"] == "2026-08-20T02:04:58"
    assert run["heartbeat_at"] == "2026-08-24T14:53:42"
    assert run["last_step"] == 13527 and run["history_line_count"] == 13528
    assert run["group"] == "moe-hero-ep-scaling-ladder" and run["user"] == "ravwojdyla"
    config = data["config"]
    assert isinstance(config, dict)
    assert config["trainer"] == {
        "id": "hero-12d8b6f0-dee637",
        "seed": 0,
        "train_batch_size": 11264,
        "num_train_steps": 390251,
    }
    count = config["parameter_count"]
    assert type(count) is int and count == 535477106688
    assert "_wandb" not in config
    internal = data["config_internal"]
    assert isinstance(internal, dict) and internal["_wandb"]["cli_version"] == "0.21.1"
    summary = data["summary"]
    assert isinstance(summary, dict)
    assert summary["_step"] == 13527 and summary["train/cross_entropy_loss"] == 1.321

    # The raw answer is in the store, byte for byte what the server sent.
    blob = next(b for b in capture.blobs if b.name == "graphql-response.json")
    raw = Store(tmp_path / ".prov").read(Digest.parse(blob.digest))
    sent = json.loads(raw)["data"]["project"]["run"]
    assert isinstance(sent["config"], str) and '"value": 535477106688' in sent["config"]
    assert capture.establishes == ("observed",)


def test_the_api_key_is_sent_as_w_and_b_basic_auth(
    collect: Collect, marin_server: LocalServer, marin_fixtures: Fixtures
) -> None:
    capture = collect(wandb(), env=api_env(marin_server, marin_fixtures))

    request = marin_server.requests_to("/graphql")[-1]
    assert marin_fixtures.wandb_api_key is not None
    assert request.header("authorization") == wandb_auth(marin_fixtures.wandb_api_key)
    assert json.loads(request.body)["variables"] == {
        "entity": "marin-community",
        "project": "marin_moe",
        "name": "hero-12d8b6f0-dee637",
    }
    assert capture.request == {
        "run": HERO,
        "base_url": marin_server.url,
        "operation": "Run",
        "authenticated": True,
    }


def test_a_wrong_key_is_a_failed_capture_with_the_status_and_errors(
    collect: Collect, marin_server: LocalServer
) -> None:
    env = {"WANDB_BASE_URL": marin_server.url, "WANDB_API_KEY": "not-the-right-key-000"}
    capture = collect(wandb(), env=env)

    assert capture.status == "failed"
    assert capture.error is not None and capture.error.type == "http-status"
    assert capture.error.detail["status"] == 401
    assert capture.error.detail["errors"] == ["user is not logged in"]
    assert any(b.name == "graphql-response.json" for b in capture.blobs)


def test_the_key_comes_from_netrc_when_the_environment_has_none(
    collect: Collect, marin_server: LocalServer, marin_fixtures: Fixtures, tmp_path: Path
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text(
        f"machine 127.0.0.1\n  login user\n  password {marin_fixtures.wandb_api_key}\n"
    )
    env = {"WANDB_BASE_URL": marin_server.url, "NETRC": str(netrc)}
    capture = collect(wandb(), env=env)

    assert capture.status == "ok", capture.error
    assert capture.request["authenticated"] is True


@pytest.mark.parametrize(
    ("run", "message"),
    [
        ("marin-community/marin_moe/no-such-run", "no run 'no-such-run'"),
        ("marin-community/elsewhere/hero", "project marin-community/elsewhere not found"),
    ],
)
def test_a_missing_run_or_project_is_a_failed_not_found_capture(
    collect: Collect, marin_server: LocalServer, marin_fixtures: Fixtures, run: str, message: str
) -> None:
    capture = collect(wandb(run), env=api_env(marin_server, marin_fixtures))

    assert capture.status == "failed"
    assert capture.error is not None and capture.error.type == "not-found"
    assert message in capture.error.message


def test_the_legacy_desc_wrapped_config_from_the_api_unwraps_the_same(
    collect: Collect, marin_fixtures: Fixtures
) -> None:
    results = []
    for legacy in (False, True):
        marin_fixtures.wandb_runs[0].legacy_config = legacy
        with LocalServer(marin_fixtures) as server:
            results.append(collect(wandb(), env=api_env(server, marin_fixtures)))
    assert results[0].data["config"] == results[1].data["config"]
    assert results[0].blobs[1].digest != results[1].blobs[1].digest  # the wire bytes differ


# -- local run directories ------------------------------------------------------------------

NEW_FORMAT = """\
_wandb:
    value:
        cli_version: 0.24.2
        m: []
        t:
            "1":
                - 1
                - 11
trainer:
    value:
        train_batch_size: 11264
        num_train_steps: 390251
parameter_count:
    value: 535477106688
min_lr:
    value: 5e-05
lr:
    value: 0.0005
tags:
    value:
        - hero
        - moe
"""

OLD_FORMAT = """\
wandb_version: 1

_wandb:
  desc: null
  value:
    cli_version: 0.13.2
    m: []
    t:
      1:
      - 1
      - 11
trainer:
  desc: null
  value:
    train_batch_size: 11264
    num_train_steps: 390251
parameter_count:
  desc: null
  value: 535477106688
min_lr:
  desc: null
  value: 5.0e-05
lr:
  desc: null
  value: 0.0005
tags:
  desc: null
  value:
  - hero
  - moe
"""


def run_dir(root: Path, name: str, config: str, summary: str | None = None) -> Path:
    files = root / name / "files"
    files.mkdir(parents=True)
    (files / "config.yaml").write_text(config)
    if summary is not None:
        (files / "wandb-summary.json").write_text(summary)
    return root / name


def test_both_config_yaml_formats_give_the_same_unwrapped_config(
    collect: Collect, tmp_path: Path
) -> None:
    new = run_dir(tmp_path, "run-20260820_020458-abc123", NEW_FORMAT, '{"_step": 13527}')
    old = run_dir(tmp_path, "run-20220825_061538-old999", OLD_FORMAT)
    first = collect({"name": "new", "kind": "wandb", "path": str(new)})
    second = collect({"name": "old", "kind": "wandb", "path": str(old)})

    assert first.status == second.status == "ok"
    assert first.data["config"] == second.data["config"]
    config = first.data["config"]
    assert config == {
        "trainer": {"train_batch_size": 11264, "num_train_steps": 390251},
        "parameter_count": 535477106688,
        "min_lr": 5e-05,
        "lr": 0.0005,
        "tags": ["hero", "moe"],
    }
    assert type(config["min_lr"]) is float
    assert second.data["config_internal"]["wandb_version"] == 1
    assert "wandb_version" not in first.data["config_internal"]
    assert first.data["run"]["id"] == "abc123"
    assert first.data["run"]["last_step"] == 13527
    assert second.data["missing_files"] == ["files/wandb-summary.json", "files/wandb-metadata.json"]
    assert [b.name for b in first.blobs] == ["files/config.yaml", "files/wandb-summary.json"]


def _as_old_format(config: dict[str, Any]) -> str:
    wrapped = {k: {"desc": None, "value": v["value"]} for k, v in config.items()}
    return yaml.safe_dump({"wandb_version": 1, **wrapped}, sort_keys=False)


def _as_new_format(config: dict[str, Any]) -> str:
    unwrapped = {k: {"value": v["value"]} for k, v in config.items() if k != "wandb_version"}
    return yaml.safe_dump(unwrapped, sort_keys=False)


def test_real_run_directories_read_the_same_in_both_formats(
    collect: Collect, shared: Path, tmp_path: Path
) -> None:
    tinylm = shared / "marin" / "wandb" / "tinylm_wandb_0.24.2"
    yolo = shared / "marin" / "wandb" / "yolov4dota_wandb_0.13.2"
    if not tinylm.is_dir() or not yolo.is_dir():
        pytest.skip(
            f"{tinylm.parent} lacks the real run folders: update ../shared (PROV_SHARED=DIR)"
        )

    real_tiny = collect({"name": "tinylm", "kind": "wandb", "path": str(tinylm)})
    real_yolo = collect({"name": "yolo", "kind": "wandb", "path": str(yolo)})
    assert real_tiny.status == real_yolo.status == "ok"

    # The same config rewritten in the other format reads the same.
    tiny_raw = yaml.load((tinylm / "config.yaml").read_text(), Loader=yaml.SafeLoader)
    yolo_raw = yaml.load((yolo / "config.yaml").read_text(), Loader=yaml.SafeLoader)
    tiny_old = run_dir(tmp_path, "tiny-old", _as_old_format(tiny_raw))
    yolo_new = run_dir(tmp_path, "yolo-new", _as_new_format(yolo_raw))
    assert (
        collect({"name": "a", "kind": "wandb", "path": str(tiny_old)}).data["config"]
        == (real_tiny.data["config"])
    )
    assert (
        collect({"name": "b", "kind": "wandb", "path": str(yolo_new)}).data["config"]
        == (real_yolo.data["config"])
    )

    tiny = real_tiny.data["config"]
    assert isinstance(tiny, dict)
    assert tiny["batch_size"] == 8 and tiny["epochs"] == 4
    assert tiny["min_lr"] == 5e-05 and type(tiny["min_lr"]) is float  # Go's YAML 1.2 float
    assert "_wandb" not in tiny
    assert real_tiny.data["summary"]["_step"] == 53560
    assert real_tiny.data["run"]["commit"] == "9b6ecb7a19f14630d448bbc51e0e07c69df0cd51"
    assert real_tiny.data["run"]["created_at"] == "2026-02-11T05:12:27.766969Z"

    yolo_config = real_yolo.data["config"]
    assert isinstance(yolo_config, dict)
    assert yolo_config["batch_size"] == 48 and yolo_config["epochs"] == 3000
    assert yolo_config["hyp"]["lr0"] == 0.01
    assert real_yolo.data["config_internal"]["wandb_version"] == 1
    # YAML 1.1 int keys (t: {1: [...]}) become JSON strings, so the capture stays canonical.
    assert "1" in real_yolo.data["config_internal"]["_wandb"]["t"]


def test_the_constructed_graphql_answer_parses_with_exact_integers(shared: Path) -> None:
    path = shared / "marin" / "wandb" / "constructed_graphql_Run_response_hero.json"
    if not path.is_file():
        pytest.skip(f"{path} is not in this copy of ../shared: update it (PROV_SHARED=DIR)")
    run = json.loads(path.read_bytes())["data"]["project"]["run"]
    data = _run_data(run)

    assert data["config"]["parameter_count"] == 535477106688
    assert type(data["config"]["parameter_count"]) is int
    assert data["config"]["trainer"]["num_train_steps"] == 390251
    assert data["run"]["last_step"] == 13527 and data["run"]["state"] == "running"
    assert "_wandb" in data["config_internal"]


def test_unwrapping_follows_the_w_and_b_client() -> None:
    config, internal = unwrap_config(
        {
            "wandb_version": 1,
            "_wandb": {"desc": None, "value": {"cli_version": "0.13.2"}},
            "lr": {"desc": "learning rate", "value": 0.1},
            "plain": 3,
        }
    )
    assert config == {"lr": 0.1, "plain": 3}
    assert internal == {"wandb_version": 1, "_wandb": {"cli_version": "0.13.2"}}
    assert load_config_yaml(b"x:\n  value: .nan\n") == {"x": {"value": "NaN"}}

"""The embedded Marin demo: two milestones of the 535B-A23B run, captured, signed, verified,
diffed and checked against the run's published numbers, offline.

    python examples/marin/demo.py [--out out/marin-demo]      (or: make demo)

A local server on 127.0.0.1 speaks the real wire formats of W&B, the Hugging Face Hub, an S3-style
object store and the GitHub API, serving the fixture data of `fixtures.py` as the sources stood on
2026-08-23 and on 2026-09-15. Every step runs the real `prov` command, as a user would; the story
at the end is read from what those commands wrote, not typed in here.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fixtures  # noqa: E402

MILESTONES = ("2026-08-23", "2026-09-15")
MARKER = ".prov-demo"
REAL_URLS = {
    "https://github.com/marin-community/marin": "{repo}",
    "https://marin-us-east-02a.cwobject.com": "{server}",
    "https://api.github.com": "{server}",
}


@dataclass
class Step:
    number: int
    total: int

    def say(self, text: str) -> None:
        print(f"[{self.number}/{self.total}] {text}", flush=True)
        self.number += 1


class Demo:
    def __init__(self, out: Path, server_url: str) -> None:
        self.out = out
        self.server_url = server_url
        self.env = {
            **os.environ,
            "WANDB_BASE_URL": server_url,
            "WANDB_API_KEY": fixtures.WANDB_DEMO_KEY,
            "HF_ENDPOINT": server_url,
            "NO_COLOR": "1",
        }
        for name in ("PROV_STORE", "PROV_CONFIG", "HF_TOKEN"):
            self.env.pop(name, None)

    def prov(self, *args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
        """Run the real command line, as a user would, in the demo folder."""
        result = subprocess.run(
            [sys.executable, "-m", "provenance", *args],
            cwd=self.out,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode not in ok:
            sys.stderr.write(result.stdout + result.stderr)
            raise SystemExit(f"demo: `prov {' '.join(args)}` exited {result.returncode}")
        return result

    def json(self, *args: str, ok: tuple[int, ...] = (0,)) -> Any:
        return json.loads(self.prov(*args, "--format", "json", ok=ok).stdout)


def reset(out: Path) -> None:
    """Start from an empty folder; only ever remove a folder this demo made."""
    if out.exists():
        if not (out / MARKER).is_file():
            raise SystemExit(f"demo: {out} exists and was not made by the demo; choose --out")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("made by examples/marin/demo.py; safe to delete\n")


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Marin demo",
        "GIT_AUTHOR_EMAIL": "demo@example.org",
        "GIT_COMMITTER_NAME": "Marin demo",
        "GIT_COMMITTER_EMAIL": "demo@example.org",
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"demo: git {' '.join(args)} failed: {done.stderr}")
    return done.stdout.strip()


def commit_launcher(repo: Path, milestone: int, date: str) -> str:
    for relative, text in fixtures.launcher_files(milestone).items():
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"launcher as of {date}", f"--date={date}T12:00:00Z")
    return git(repo, "rev-parse", "HEAD")


def write_config(out: Path, repo: Path, server_url: str, milestone: int) -> None:
    """examples/marin/prov.toml, with the real hosts pointed at the local server."""
    text = (HERE / "prov.toml").read_text()
    for real, local in REAL_URLS.items():
        text = text.replace(real, local.format(repo=repo, server=server_url))
    text = text.replace('ref = "12d8b6f09f96ad4f0277445765c1a00dbc81d5be"', 'ref = "main"')
    run = fixtures.wandb_run(milestone, "0" * 40)
    text = text.replace("marin-community/marin_moe/hero-12d8b6f0-dee637", run.path)
    (out / "prov.toml").write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("out/marin-demo"))
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    from provenance._testing.server import LocalServer

    started = time.monotonic()
    step = Step(1, 9)
    reset(out)
    repo = out / "marin"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    print("prov demo: the Marin 535B-A23B run, two milestones, offline\n")

    commits: list[str] = []
    with LocalServer(fixtures.server_fixtures(1, "0" * 40)) as server:
        demo = Demo(out, server.url)
        step.say(
            f"a local server on {server.url} speaks W&B GraphQL, the HF Hub API, an S3-style "
            "object store and the GitHub API"
        )
        demo.prov("keygen", "demo", "--dir", "keys")
        step.say("made a demo signing key: keys/demo.key (0600) and keys/demo.pub")
        for number, label in enumerate(MILESTONES, start=1):
            commits.append(commit_launcher(repo, number, label))
            server.fixtures = fixtures.server_fixtures(number, commits[-1])
            write_config(out, repo, server.url, number)
            result = demo.prov("snapshot", "--label", label, "--key", "keys/demo.key")
            step.say(f"milestone {label}: $ prov snapshot --label {label} --key keys/demo.key")
            for line in result.stdout.splitlines()[1:]:
                print(f"      {line}")
    # Everything below reads only what was written: no server, no network.
    for label in MILESTONES:
        demo.prov(
            "verify",
            f"attestations/{label}.intoto.jsonl",
            "--key",
            "keys/demo.pub",
            "--store",
            ".prov",
        )
    step.say(
        "verified both attestations offline: envelope, signature, statement, subject digest "
        "and every stored blob (prov verify ... --key keys/demo.pub --store .prov)"
    )
    diff_text = demo.prov("diff", *MILESTONES, ok=(1,)).stdout
    (out / "diff.txt").write_text(diff_text)
    diff = demo.json("diff", *MILESTONES, ok=(1,))
    step.say(f"diffed the milestones: $ prov diff {' '.join(MILESTONES)} (exit 1: they differ)")
    claims = HERE / "claims.toml"
    reports = {
        label: demo.json("check", "--claims", str(claims), label, ok=(0, 1)) for label in MILESTONES
    }
    (out / "claims.txt").write_text(
        demo.prov("check", "--claims", str(claims), MILESTONES[1], ok=(0, 1)).stdout
    )
    step.say(
        f"checked {len(reports[MILESTONES[1]]['results'])} published claims at both milestones"
    )
    latest = f"attestations/{MILESTONES[1]}.intoto.jsonl"
    demo.prov("pack", latest, "--key", "keys/demo.pub", "-o", f"evidence-{MILESTONES[1]}.tar")
    step.say(
        f"packed the {MILESTONES[1]} attestation with its blobs and key: "
        f"evidence-{MILESTONES[1]}.tar"
    )
    demo.prov(
        "report", *MILESTONES, "--claims", str(claims), "--format", "html", "-o", "report.html"
    )
    step.say("wrote the HTML report: claims table and milestone diff, self-contained")

    first = demo.json("show", MILESTONES[0])["snapshot"]
    print()
    print(story(first, reports, diff, diff_text))
    print("\nWhat it wrote (all under the demo folder):")
    for name in (
        *(f"attestations/{label}.intoto.jsonl" for label in MILESTONES),
        f"evidence-{MILESTONES[1]}.tar",
        "report.html",
        "diff.txt",
        "claims.txt",
        "keys/demo.pub",
        ".prov/",
    ):
        print(f"  {out / name}")
    prov = shutil.which("prov") or str(Path(sys.executable).with_name("prov"))
    print(
        "\nCheck it yourself:\n"
        f"  cd {out}\n"
        f"  {prov} verify --pack evidence-{MILESTONES[1]}.tar --key keys/demo.pub\n"
        f"  {prov} diff {' '.join(MILESTONES)}\n"
        f"  {prov} check --claims {claims} {MILESTONES[1]}\n"
        f"\n(done in {time.monotonic() - started:.1f} s)"
    )
    write_site(demo, out, HERE / "claims.toml")
    return 0


def write_site(demo: Demo, out: Path, claims: Path) -> None:
    """The run's provenance site: every milestone verified, claims, diffs, plots, downloads."""
    demo.prov(
        "site", "-o", "site", "--claims", str(claims), "--key", "keys/demo.pub",
        "--title", "Marin 535B-A23B: provenance",
    )  # fmt: skip
    print(f"\nThe provenance site (prov site -o site ...): {out / 'site' / 'index.html'}")


# -- the story, read from what prov wrote ---------------------------------------------------------


def _claim(report: dict[str, Any], starts: str) -> dict[str, Any]:
    return next(r for r in report["results"] if r["name"].startswith(starts))


def _num(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _verdict(result: dict[str, Any]) -> str:
    return {"pass": "holds", "fail": "FAILS", "error": "ERROR"}[result["status"]]


def story(
    first: dict[str, Any],
    reports: dict[str, dict[str, Any]],
    diff: dict[str, Any],
    diff_text: str,
) -> str:
    early, latest = reports[MILESTONES[0]], reports[MILESTONES[1]]
    tokens = _claim(latest, "total training tokens")
    steps = _claim(latest, "training steps")
    switch = _claim(latest, "phase-1 switch step, as the launcher")
    implied = _claim(latest, "phase-1 switch step, if")
    lines = ["What prov found", "==============="]
    lines.append(
        f"- Tokens: the W&B config gives {_num(tokens['derived'])} tokens "
        "(batch x sequence x steps); "
        f"the announcement says {tokens['claimed_text']}: a gap of {_num(tokens['gap'])} "
        f"({tokens['relative_gap']:+.2%}). Claim {_verdict(tokens)}."
    )
    lines.append(
        f"- Steps: the job summary says {_num(steps['claimed'])}, the config "
        f"{_num(steps['derived'])} ({steps['gap']:+,}). The mixture in the launcher switches "
        f"phase at step {_num(switch['derived'])}, which is what 80% of {_num(steps['derived'])} "
        f"steps gives ({_verdict(switch)}); {_num(steps['claimed'])} steps would switch at "
        f"{_num(implied['claimed'])} ({_verdict(implied)}). "
        f"The code runs {_num(steps['derived'])} steps."
    )
    store = next(c for c in first["captures"] if c["source"] == "store-artifact")
    error_body = store["data"].get("error_body") or {}
    body = next((b for b in store["blobs"] if b["name"] == "body"), None)
    lines.append(
        f"- Data store: at {store['started']} (milestone {MILESTONES[0]}), "
        f"GET {store['request'].get('url', '')} answered {store['data']['status']} "
        f"{error_body.get('code', '')} (request id {error_body.get('request_id', '?')}); "
        f"the body is kept as {body['digest'] if body else '(no body)'}. "
        f"Claim 'store answers anonymous reads': {_verdict(_claim(early, 'the processed'))} "
        f"on {MILESTONES[0]}, {_verdict(_claim(latest, 'the processed'))} on {MILESTONES[1]}."
    )
    for name in ("total parameters (exact)", "total parameters (job", "active parameters", "GPUs"):
        result = _claim(latest, name)
        gap = f", gap {result['relative_gap']:+.3%}" if result.get("relative_gap") else ""
        lines.append(
            f"- {result['name']}: published {result['claimed_text']}, derived "
            f"{_num(result['derived'])}{gap}: {_verdict(result)}."
        )
    lines.append(f"\nBetween {MILESTONES[0]} and {MILESTONES[1]} ({diff_summary(diff)}):")
    lines.extend(f"  {line}" for line in diff_highlights(diff_text))
    failed = latest["failed"]
    lines.append(
        f"\n{latest['passed']} claims hold and {failed} fail at {MILESTONES[1]}; "
        "see claims.txt, diff.txt and report.html."
    )
    return "\n".join(lines)


def diff_summary(diff: dict[str, Any]) -> str:
    counts = diff.get("counts", {})
    parts = [f"{value} {key.replace('_', ' ')}" for key, value in counts.items() if value]
    return ", ".join(parts) or "no differences"


HIGHLIGHTS = ("~ commit:", "~ request.run:", "+ phases", "~ status:", "~ error_body.code:")


def diff_highlights(diff_text: str) -> list[str]:
    """The changes a reader asks about first: commit, run id, mixture phases, store status."""
    lines: list[str] = []
    source = ""
    movers = 0
    for line in diff_text.splitlines():
        if (
            line
            and not line.startswith(" ")
            and line.endswith((": changed", ": added", ": removed"))
        ):
            source = line.split(" [")[0]
            movers = 0
        stripped = line.strip()
        if stripped.startswith(HIGHLIGHTS):
            lines.append(f"{source}: {stripped}")
        elif " pp)" in stripped and movers < 3:
            movers += 1
            lines.append(f"{source}:     {stripped}")
    return lines or ["(see diff.txt)"]


if __name__ == "__main__":
    raise SystemExit(main())

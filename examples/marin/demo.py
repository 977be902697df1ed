"""The embedded Marin demo: two milestones of the 535B-A23B run, captured, signed, verified,
diffed and checked against the run's published numbers, offline.

    python examples/marin/demo.py [--out out/marin-demo]      (or: make demo)

A local git repository holds the launcher files in the shapes of the real ones at both commits
(data/launcher); a local server on 127.0.0.1 speaks the real wire formats of W&B, the Hugging Face
Hub, an S3-style object store and the GitHub API, serving what those sources answered on
2026-08-23 and on 2026-09-15 (data/server, constructed; see data/README.md). Every step runs the
real `prov` command, as a user would; the story at the end is read from what those commands
wrote, not typed in here.

The steps are the functions of ``STEPS``, in order; a new step is one more function there.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
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
            "WANDB_API_KEY": fixtures.wandb_api_key(),
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
    for old in repo.glob("experiments/**/*"):
        if old.is_file():
            old.unlink()
    for relative, content in fixtures.launcher_files(milestone).items():
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"launcher as of {date}", f"--date={date}T12:00:00Z")
    return git(repo, "rev-parse", "HEAD")


def write_config(out: Path, repo: Path, server_url: str, milestone: int) -> None:
    """examples/marin/prov.toml, with the real hosts pointed at the local server."""
    text = (HERE / "prov.toml").read_text()
    for real, local in REAL_URLS.items():
        text = text.replace(real, local.format(repo=repo, server=server_url))
    text = text.replace(f'ref = "{fixtures.COMMITS[1]}"', 'ref = "main"')
    run = f"marin-community/marin_moe/{fixtures.RUNS[milestone]}"
    text = text.replace(f"marin-community/marin_moe/{fixtures.RUNS[1]}", run)
    (out / "prov.toml").write_text(text)


@dataclass
class Run:
    """What the steps share: where the demo works, how it runs prov, what earlier steps wrote."""

    out: Path
    demo: Demo
    claims: Path = HERE / "claims.toml"
    reports: dict[str, Any] = field(default_factory=dict)
    diff: dict[str, Any] = field(default_factory=dict)
    diff_text: str = ""
    written: list[str] = field(default_factory=list)


def capture(run: Run, step: Step) -> None:
    """Both milestones: the launcher committed, the server answering as on that day, a snapshot."""
    from provenance._testing.server import LocalServer

    repo = run.out / "marin"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    with LocalServer(fixtures.server_fixtures(1)) as server:
        run.demo = Demo(run.out, server.url)
        step.say(
            f"a local server on {server.url} speaks W&B GraphQL, the HF Hub API, an S3-style "
            "object store and the GitHub API"
        )
        run.demo.prov("keygen", "demo", "--dir", "keys")
        step.say("made a demo signing key: keys/demo.key (0600) and keys/demo.pub")
        for number, label in enumerate(MILESTONES, start=1):
            commit = commit_launcher(repo, number, label)
            server.fixtures = fixtures.server_fixtures(number, commit)
            write_config(run.out, repo, server.url, number)
            result = run.demo.prov("snapshot", "--label", label, "--key", "keys/demo.key")
            step.say(f"milestone {label}: $ prov snapshot --label {label} --key keys/demo.key")
            for line in result.stdout.splitlines()[1:]:
                print(f"      {line}")
    run.written += [f"attestations/{label}.intoto.jsonl" for label in MILESTONES]


def verify(run: Run, step: Step) -> None:
    """Everything from here on reads only what was written: no server, no network."""
    for label in MILESTONES:
        run.demo.prov(
            "verify", f"attestations/{label}.intoto.jsonl", "--key", "keys/demo.pub",
            "--store", ".prov",
        )  # fmt: skip
    step.say(
        "verified both attestations offline: envelope, signature, statement, subject digest "
        "and every stored blob (prov verify ... --key keys/demo.pub --store .prov)"
    )


def diff(run: Run, step: Step) -> None:
    args = ("diff", *MILESTONES, "--claims", str(run.claims))
    run.diff_text = run.demo.prov(*args, ok=(1,)).stdout
    (run.out / "diff.txt").write_text(run.diff_text)
    run.diff = run.demo.json(*args, ok=(1,))
    run.written.append("diff.txt")
    step.say(
        f"diffed the milestones: $ prov diff {' '.join(MILESTONES)} --claims claims.toml "
        "(exit 1: they differ; the summary names the claims affected)"
    )


def check(run: Run, step: Step) -> None:
    claims = str(run.claims)
    run.reports = {
        label: run.demo.json("check", "--claims", claims, label, ok=(0, 1)) for label in MILESTONES
    }
    text = run.demo.prov("check", "--claims", claims, MILESTONES[1], ok=(0, 1)).stdout
    (run.out / "claims.txt").write_text(text)
    run.written.append("claims.txt")
    count = len(run.reports[MILESTONES[1]]["results"])
    step.say(f"checked {count} published claims at both milestones")


def pack(run: Run, step: Step) -> None:
    latest, target = f"attestations/{MILESTONES[1]}.intoto.jsonl", f"evidence-{MILESTONES[1]}.tar"
    run.demo.prov("pack", latest, "--key", "keys/demo.pub", "-o", target)
    run.written.append(target)
    step.say(f"packed the {MILESTONES[1]} attestation with its blobs and key: {target}")


def report(run: Run, step: Step) -> None:
    run.demo.prov(
        "report", *MILESTONES, "--claims", str(run.claims), "--format", "html", "-o",
        "report.html",
    )  # fmt: skip
    run.written.append("report.html")
    step.say("wrote the HTML report: claims table and milestone diff, self-contained")


def site(run: Run, step: Step) -> None:
    """The run's provenance site: every milestone verified, claims, diffs, plots, downloads."""
    run.demo.prov(
        "site", "-o", "site", "--claims", str(run.claims), "--key", "keys/demo.pub",
        "--title", "Marin 535B-A23B: provenance",
    )  # fmt: skip
    run.written.append("site/index.html")
    step.say(
        f"wrote the provenance site (prov site -o site ...): {run.out / 'site' / 'index.html'}"
    )


STEPS = (capture, verify, diff, check, pack, report, site)
"""The demo, in order; each says one line of what it did (``capture`` one more per milestone)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("out/marin-demo"))
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    started = time.monotonic()
    reset(out)
    print("prov demo: the Marin 535B-A23B run, two milestones, offline\n")
    run = Run(out, Demo(out, ""))
    step = Step(1, len(STEPS) + 1 + len(MILESTONES))
    for action in STEPS:
        action(run, step)
    first = run.demo.json("show", MILESTONES[0])["snapshot"]
    print()
    print(story(first, run.reports, run.diff, run.diff_text))
    print("\nWhat it wrote (all under the demo folder):")
    for name in (*run.written, "keys/demo.pub", ".prov/"):
        print(f"  {out / name}")
    prov = shutil.which("prov") or str(Path(sys.executable).with_name("prov"))
    print(
        "\nCheck it yourself:\n"
        f"  cd {out}\n"
        f"  {prov} verify --pack evidence-{MILESTONES[1]}.tar --key keys/demo.pub\n"
        f"  {prov} diff {' '.join(MILESTONES)}\n"
        f"  {prov} check --claims {run.claims} {MILESTONES[1]}\n"
        f"\n(done in {time.monotonic() - started:.1f} s)"
    )
    return 0


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
    code_total = _claim(latest, "total training tokens = the launcher")
    budget = _claim(latest, "total training tokens = the mixture")
    tokens = _claim(latest, "total training tokens = steps")
    steps = _claim(latest, "training steps (job summary)")
    rule = _claim(latest, "training steps = 791")
    switch = _claim(latest, "cooldown switch step, by")
    implied = _claim(latest, "cooldown switch step implied")
    mix_early, mix_late = _claim(early, "mixture switch"), _claim(latest, "mixture switch")
    lines = ["What prov found", "==============="]
    lines.append(
        f"- Tokens: the announced {tokens['claimed_text']} is the mixture's budget: it equals the "
        f"launcher's TOTAL_TOKENS = PRETRAIN_TOKENS + COOLDOWN_TOKENS, read from the captured "
        f"Python ({_verdict(code_total)}), and the mixture file's phase budgets "
        f"({_verdict(budget)}). It is not what the run trains on: steps x batch x sequence from "
        f"the W&B config is {_num(tokens['derived'])} tokens, a gap of {_num(tokens['gap'])} "
        f"({tokens['relative_gap']:+.2%}). Claim {_verdict(tokens)}."
    )
    lines.append(
        f"- Steps: the job summary says {_num(steps['claimed'])}, the config "
        f"{_num(steps['derived'])} ({steps['gap']:+,}); the launcher's own rule, 791 tokens per "
        f"active parameter, gives {_num(rule['derived'])} ({_verdict(rule)}). "
        f"The cooldown switch at step {_num(switch['derived'])} is derived from the captured "
        f"step count and batch by the launcher's rule (_phase_1_start_step: 80%, down to a "
        f"mixture block) ({_verdict(switch)}); {_num(steps['claimed'])} steps would switch at "
        f"{_num(implied['claimed'])} ({_verdict(implied)})."
    )
    lines.append(
        f"- Mixture: on {MILESTONES[0]} the launcher has {mix_early['derived']} "
        f"({_verdict(mix_early)}); on {MILESTONES[1]} it switches at step "
        f"{_num(mix_late['derived'])}, derived from _MIXTURE_SWITCH_FRACTION = 108_000 / 390_251 "
        f"({_verdict(mix_late)}), and its mixture file went from two phases to three."
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
    lines.extend(f"  {line}" for line in diff_highlights(diff))
    for claim in diff.get("claims", []):
        lines.append(
            f"  claim affected: {claim['name']}: {_verdict({'status': claim['status_a']})} -> "
            f"{_verdict({'status': claim['status_b']})}"
        )
    lines.append(
        f"\n{latest['passed']} claims hold and {latest['failed']} fail at {MILESTONES[1]} "
        f"({early['passed']} and {early['failed']} at {MILESTONES[0]}); "
        "see claims.txt, diff.txt and report.html."
    )
    return "\n".join(lines)


def diff_summary(diff: dict[str, Any]) -> str:
    counts = diff.get("counts", {})
    parts = [f"{value} {key.replace('_', ' ')}" for key, value in counts.items() if value]
    return ", ".join(parts) or "no differences"


HIGHLIGHTS = {
    "commit",
    "request.run",
    "status",
    "error_body.code",
    "_MIXTURE_SWITCH_FRACTION",
    "HARRIER_MIX_2026_08_18_TAG",
    "CURRENT_HERO_RUN_ID",
    "phases",
    "phase_budgets",
}


def diff_highlights(diff: dict[str, Any]) -> list[str]:
    """The changes a reader asks about first, read from the JSON diff: the commit and the run,
    the launcher's constants and mixture phases, the store's status."""
    lines: list[str] = []
    for capture in diff.get("captures", []):
        for document in capture.get("documents", []):
            name = document["name"]
            where = f"{name.partition(':')[2]}: " if ":" in name else ""
            prefix = "request." if name == "request" else ""
            for change in document.get("changes", []):
                path = prefix + change["path"]
                if change["volatile"] or path not in HIGHLIGHTS:
                    continue
                lines.append(f"{capture['source']}: {where}{_change({**change, 'path': path})}")
    return lines or ["(see diff.txt)"]


def _change(change: dict[str, Any]) -> str:
    def shown(value: Any) -> str:
        if isinstance(value, list):
            return f"[{len(value)} items]"
        if isinstance(value, int) and not isinstance(value, bool):
            return f"{value:,}"
        return json.dumps(value)

    path, kind = change["path"], change["change"]
    if kind == "added":
        return f"+ {path}: {shown(change['new'])}"
    if kind == "removed":
        return f"- {path} (was {shown(change['old'])})"
    return f"~ {path}: {shown(change['old'])} -> {shown(change['new'])}"


if __name__ == "__main__":
    raise SystemExit(main())

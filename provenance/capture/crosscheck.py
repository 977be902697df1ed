"""Cross-checks: do the captures of one snapshot agree with each other?

Collectors never see each other, so comparisons run here, over the finished captures, and their
results go into the snapshot (``Snapshot.cross_checks``), where ``prov show`` prints them, ``prov
diff`` compares them and a claim can test them (``cross_checks['trainer/revision'].matches``).

The one check so far: an image's ``org.opencontainers.image.revision`` label against the commit
of a git capture. The git capture is the one the oci source names with ``git_source``; else the
one whose remote matches the image's ``org.opencontainers.image.source`` label; else the only one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from provenance.model import Capture, CrossCheck

REVISION_CHECK = "oci-revision-git-commit"
_COMMIT = re.compile(r"^[0-9a-f]{7,64}$")


def run(captures: Sequence[Capture]) -> dict[str, CrossCheck]:
    """Every cross-check that applies to these captures, keyed by ``<source>/<check>``."""
    gits = {c.source: c for c in captures if c.kind == "git"}
    checks: dict[str, CrossCheck] = {}
    if not gits:
        return checks
    for capture in captures:
        if capture.kind != "oci" or capture.status != "ok":
            continue
        revision = capture.data.get("revision")
        if isinstance(revision, str) and revision.strip():
            checks[f"{capture.source}/revision"] = _revision(capture, revision.strip(), gits)
    return checks


def _revision(image: Capture, revision: str, gits: dict[str, Capture]) -> CrossCheck:
    values: dict[str, Any] = {"revision": revision, "image_digest": image.data.get("digest")}

    def result(against: str | None, outcome: str, detail: str) -> CrossCheck:
        return CrossCheck(
            check=REVISION_CHECK,
            source=image.source,
            against=against,
            result=outcome,
            matches={"match": True, "mismatch": False}.get(outcome),
            values=values,
            detail=detail,
        )

    git, why = _counterpart(image, gits)
    if git is None:
        return result(None, "undetermined", why)
    commit = git.data.get("commit")
    values["commit"] = commit
    if git.status != "ok" or not isinstance(commit, str):
        return result(git.source, "undetermined", f"git source {git.source!r} was not captured")
    if not _COMMIT.match(revision.lower()):
        return result(
            git.source, "undetermined", f"the revision label {revision!r} is not a commit id"
        )
    if commit.lower().startswith(revision.lower()):
        return result(git.source, "match", f"the image was built from commit {commit} ({why})")
    return result(
        git.source,
        "mismatch",
        f"the image says revision {revision}, git source {git.source!r} is at {commit} ({why})",
    )


def _counterpart(image: Capture, gits: dict[str, Capture]) -> tuple[Capture | None, str]:
    named = image.request.get("git_source")
    if isinstance(named, str) and named:
        if named in gits:
            return gits[named], "named by git_source"
        return None, f"git_source names {named!r}, which is not a git source of this snapshot"
    label = image.data.get("source")
    if isinstance(label, str) and label:
        wanted = normalise_remote(label)
        same = [g for g in gits.values() if normalise_remote(g.data.get("remote_url")) == wanted]
        if len(same) == 1:
            return same[0], "matched by the image's source label"
    if len(gits) == 1:
        return next(iter(gits.values())), "the snapshot's only git source"
    return None, "several git sources and none named: set git_source on the oci source"


def normalise_remote(url: object) -> str | None:
    """A remote URL as ``host/path``: ``git@github.com:Org/Repo.git`` -> ``github.com/org/repo``."""
    if not isinstance(url, str) or not url:
        return None
    text = url.strip()
    if match := re.match(r"^[^/@:]+@([^/:]+):(.+)$", text):  # scp-like ssh
        text = f"{match.group(1)}/{match.group(2)}"
    text = re.sub(r"^[a-z][a-z0-9+.-]*://", "", text, flags=re.IGNORECASE)
    host, slash, path = text.partition("/")
    text = host.rpartition("@")[2] + slash + path  # drop userinfo (or its [REDACTED] mark)
    text = text.rstrip("/")
    text = text.removesuffix(".git")
    return text.lower()

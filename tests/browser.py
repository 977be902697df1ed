"""Headless Chromium for tests that look at a page as a person would.

Chromium is a Debian package (`apt-get install chromium`, done by .ci/run); without it these tests
skip. Screenshots are kept under tests/artifacts/ (git-ignored) for a human to look at.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).parent / "artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="needs headless Chromium to lay out the page: apt-get install chromium (.ci/run does)",
)

QUIET = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
"""Headless, with nothing that reaches out to the network by itself."""


def chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium with nothing that reaches out to the network by itself."""
    assert CHROMIUM is not None
    command = [CHROMIUM, *QUIET, f"--user-data-dir={profile}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)


class DevTools:
    """Headless Chromium driven over the DevTools protocol on a pipe (no port, no websocket).

    For what ``--dump-dom`` cannot tell: the layout at a given width, the text as rendered, and
    every request the page made. ``Runtime.evaluate`` runs in the page even though the page's
    own policy forbids scripts, so the page under test is never altered.
    """

    def __init__(self, profile: Path, *args: str) -> None:
        import json
        import os

        assert CHROMIUM is not None
        self._json = json
        commands_read, self._commands = os.pipe()
        self._replies, replies_write = os.pipe()

        def pipes() -> None:  # the protocol's fixed descriptors: 3 in, 4 out
            os.dup2(commands_read, 3)
            os.dup2(replies_write, 4)

        self.process = subprocess.Popen(
            [
                CHROMIUM,
                *QUIET,
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                *args,
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=pipes,  # only dup2, before exec
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(commands_read)
        os.close(replies_write)
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, object]] = []
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Network", "Runtime"):
            self.send(f"{domain}.enable", session=self.session)

    def _message(self) -> dict[str, object]:
        import os
        import select

        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._replies], [], [], 60)
            if not ready:
                raise TimeoutError("chromium did not answer within 60 s")
            chunk = os.read(self._replies, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, object] = self._json.loads(raw)
        return message

    def send(self, method: str, session: str | None = None, **params: object) -> dict[str, object]:
        import os

        self._id += 1
        message: dict[str, object] = {"id": self._id, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self._commands, self._json.dumps(message).encode() + b"\0")
        while True:
            reply = self._message()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result = reply.get("result", {})
                assert isinstance(result, dict)
                return result
            self.events.append(reply)

    def page(self, method: str, **params: object) -> dict[str, object]:
        return self.send(method, session=self.session, **params)

    def open(self, url: str, width: int, height: int = 900) -> None:
        """Load ``url`` at a viewport ``width`` px wide and wait for its load event."""
        self.page(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.events.clear()
        self.page("Page.navigate", url=url)
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._message())

    def evaluate(self, expression: str) -> object:
        result = self.page("Runtime.evaluate", expression=expression, returnByValue=True)
        inner = result["result"]
        assert isinstance(inner, dict), result
        return inner.get("value")

    def requests(self) -> list[str]:
        """The URL of every request the page made since it was opened."""
        urls = []
        for event in self.events:
            if event.get("method") == "Network.requestWillBeSent":
                params = event["params"]
                assert isinstance(params, dict)
                urls.append(str(params["request"]["url"]))
        return urls

    def screenshot(self, target: Path) -> None:
        import base64

        shot = self.page("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        target.write_bytes(base64.b64decode(str(shot["data"])))

    def close(self) -> None:
        import contextlib

        with contextlib.suppress(Exception):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        import os

        os.close(self._commands)
        os.close(self._replies)

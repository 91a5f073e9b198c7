"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
NUL-terminated JSON on file descriptors 3 and 4), so a test or a benchmark can wait in real
time for a page, run script in it and take a screenshot, with no websocket library and no port.

    with Browser(profile_dir) as b:
        page = b.open(url, width=1400, height=1000)
        page.wait_for("document.body.dataset.settledMs", timeout=60)
        page.screenshot(path)
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe"]  # fmt: skip


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    def __init__(self, profile: Path, exe: str | None = None) -> None:
        exe = exe or chromium_path()
        assert exe is not None, "chromium is not installed"
        to_child, self._write = os.pipe()  # the browser reads commands on fd 3
        self._read, from_child = os.pipe()  # and writes replies and events on fd 4
        # Moved above 10 first, so putting them at 3 and 4 cannot overwrite one with the other;
        # close_fds must stay off, or it would close 3 and 4 after preexec_fn made them (every
        # other descriptor of ours is non-inheritable, PEP 446, so nothing else leaks).
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_child, from_child)]
        for fd in (to_child, from_child):
            os.close(fd)

        def at_3_and_4() -> None:
            os.dup2(ends[0], 3)
            os.dup2(ends[1], 4)

        self.proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"], close_fds=False,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=at_3_and_4,
        )  # fmt: skip
        for fd in ends:
            os.close(fd)
        self._buffer = b""
        self._next = 0

    def send(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None, timeout: float = 60) -> dict[str, Any]:  # fmt: skip
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._message(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result

    def _message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._read, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def open(self, url: str, width: int = 1400, height: int = 1000, timeout: float = 60) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})
        page = Page(self, session["sessionId"])
        page.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})  # fmt: skip
        page.call("Page.enable")
        page.call("Page.navigate", {"url": url})
        page.wait_for("document.readyState === 'complete'", timeout=timeout)
        return page

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.send("Browser.close", timeout=10)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._write)
        os.close(self._read)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.send(method, params, session=self.session)

    def eval(self, expression: str, timeout: float = 60) -> Any:
        params = {"expression": expression, "returnByValue": True}
        out = self.browser.send("Runtime.evaluate", params, session=self.session, timeout=timeout)
        if "exceptionDetails" in out:
            raise RuntimeError(f"{expression}: {out['exceptionDetails']}")
        return out["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 60) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = self.eval(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout} s for {expression}")
            time.sleep(0.1)

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))

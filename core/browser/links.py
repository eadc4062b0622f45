"""How the driver reaches its browser (standard library only; copied beside ``driver.py``).
``PipeLink`` starts headless Chromium in the sandbox and speaks DevTools over
``--remote-debugging-pipe`` (NUL-separated JSON on fds 3 and 4; no debugging port), all its
traffic through the checking proxy at ``proxy_port``. ``HostedLink`` reaches a hosted browser
(``IRIS_BROWSER_CDP_URL``) over WebSocket. Both: ``send(text)``, ``messages()`` (texts, then
None when the browser is gone), ``close()``."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:
    from core.browser.cdp_socket import CdpSocket
else:
    from cdp_socket import CdpSocket

DEBIAN_BINARY = "/usr/lib/chromium/chromium"
WATCH_SECONDS = 0.5  # how often the browser's memory is measured


def chromium(named: str) -> str:
    """Debian's ``chromium`` is a shell wrapper that reads /etc/chromium.d, which a sandbox
    need not have; its real binary needs nothing of /etc."""
    if named == "chromium" and os.access(DEBIAN_BINARY, os.X_OK):
        return DEBIAN_BINARY
    return named


class PipeLink:
    def __init__(self, cmd: dict[str, Any], proxy_port: int) -> None:
        to_child, self.write_end = os.pipe()
        self.read_end, from_child = os.pipe()
        os.set_inheritable(to_child, True)
        os.set_inheritable(from_child, True)
        argv = [
            chromium(cmd["chromium"]),
            "--headless=new",
            "--no-sandbox",
            "--remote-debugging-pipe",
            f"--user-data-dir={cmd['profile']}",
            "--no-first-run",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-extensions",
            "--mute-audio",
            "--disable-background-networking",
            # services that call Google on their own (component updates, network time,
            # safe-browsing models, translation, pings): not the user's traffic. Some still
            # do (sign-in, push messaging); they pass the proxy's checks like any public host
            "--disable-component-update",
            "--disable-default-apps",
            "--disable-domain-reliability",
            "--disable-client-side-phishing-detection",
            "--disable-breakpad",
            "--metrics-recording-only",
            "--no-pings",
            "--disable-features=Translate,OptimizationHints,MediaRouter,"
            "DialMediaRouteProvider,AutofillServerCommunication,"
            "CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions,"
            "NetworkTimeServiceQuerying",
            "--disable-sync",
            "--no-default-browser-check",
            f"--js-flags=--max-old-space-size={cmd.get('heap_mb', 512)}",
            "--window-size=1280,900",
            f"--proxy-server=http://127.0.0.1:{proxy_port}",
            "--proxy-bypass-list=<-loopback>",
            "about:blank",
        ]

        def fds() -> None:
            os.dup2(to_child, 3)
            os.dup2(from_child, 4)

        become_subreaper()
        self.proc = subprocess.Popen(
            argv,
            preexec_fn=fds,
            close_fds=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child)
        os.close(from_child)
        self.limit_kb = int(cmd.get("memory_mb", 1536)) * 1024
        self.over_kb = 0  # the browser's memory when the watchdog killed it (0: it did not)
        self._done = threading.Event()
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        """Kill every process of the browser once together they hold more than the limit
        (proportional set size, so shared pages count once). The driver is their subreaper,
        so a process Chromium forked just before it died is still found (and killed) under
        the driver; ``over_kb`` tells the driver's loop at once, whatever holds the pipe."""
        while not self._done.wait(WATCH_SECONDS):
            used = sum(pss_kb(pid) for pid in tree(self.proc.pid))
            if used > self.limit_kb:
                self.over_kb = used
                kill_descendants()
                return

    def send(self, text: str) -> None:
        try:
            os.write(self.write_end, text.encode() + b"\0")
        except BrokenPipeError:
            raise RuntimeError("the browser ended unexpectedly") from None

    def messages(self) -> Iterator[str | None]:
        buf = b""
        while True:
            chunk = os.read(self.read_end, 65536)
            if not chunk:
                yield None
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                yield raw.decode()

    def close(self) -> None:
        self._done.set()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def become_subreaper() -> None:
    """Orphans of this process's children come to it, not to init (Linux ``prctl``)."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def kill_descendants(passes: int = 20) -> None:
    """SIGKILL every live process below this one, again until none is left (a process may
    fork while the others die), reaping them as they end."""
    me = os.getpid()
    for _ in range(passes):
        pids = [pid for pid in tree(me) if pid != me]
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        if not pids:
            return
        time.sleep(0.05)


def tree(root: int) -> list[int]:
    """``root`` and every live (not zombie) process descended from it, read from /proc."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if fields[0] in ("Z", "X"):
                continue
            parent = int(fields[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(name))
    found, i = [root], 0
    while i < len(found):
        found += children.get(found[i], [])
        i += 1
    return found


def pss_kb(pid: int) -> int:
    """A process's proportional set size in kB (0 when it is gone or cannot be read)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


class HostedLink:
    def __init__(self, url: str, timeout: float) -> None:
        self.ws = CdpSocket(url, timeout)

    def send(self, text: str) -> None:
        self.ws.send(text)

    def messages(self) -> Iterator[str | None]:
        while True:
            text = self.ws.recv()
            yield text
            if text is None:
                return

    def close(self) -> None:
        self.ws.close()

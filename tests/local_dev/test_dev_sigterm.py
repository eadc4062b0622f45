"""SIGTERM stops ``iris dev`` even while a turn's thread is stuck in a blocking open (issue 28,
item 2): the process exits instead of hanging on the stuck thread, the waiting request or the
running turn; the turn stays pending for the sweeper."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from iris_testing.server import free_port
from iris_testing.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


def test_sigterm_ends_iris_dev_with_a_thread_stuck_in_a_fifo_open(iris_home, tmp_path):
    fifo = tmp_path / "stuck.fifo"
    os.mkfifo(fifo)
    port = free_port()
    env = {**os.environ, "IRIS_MODEL": "openai/never-called",
           "IRIS_MODEL_API_BASE": f"http://127.0.0.1:{free_port()}/v1",
           "IRIS_API_KEY": "k", "IRIS_SHUTDOWN_SECONDS": "4", "PYTHONPATH": str(ROOT)}
    log = (tmp_path / "dev.log").open("w")
    dev = subprocess.Popen(
        [sys.executable, "-m", "tests.local_dev.stuck_dev", str(fifo), "dev", "--port", str(port)],
        env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        def healthy() -> bool:
            assert dev.poll() is None, (tmp_path / "dev.log").read_text()
            try:
                return httpx.get(f"{url}/healthz", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(healthy, "iris dev to start", timeout=120)

        def ask() -> None:
            with contextlib.suppress(httpx.HTTPError):  # the server goes away under it
                httpx.post(f"{url}/v1/chat/completions", timeout=120,
                           headers={"Authorization": "Bearer k"},
                           json={"model": "iris", "user": "alice",
                                 "messages": [{"role": "user", "content": "hi"}]})

        threading.Thread(target=ask, daemon=True).start()
        wait_until(fifo.with_suffix(".opening").exists, "the turn's thread to open the FIFO")
        dev.send_signal(signal.SIGTERM)
        # a generous bound: it is "exits at all" that matters (the old code never did)
        code = dev.wait(timeout=90)
        assert code == 128 + signal.SIGTERM, (code, (tmp_path / "dev.log").read_text())
    finally:
        if dev.poll() is None:
            dev.kill()
            dev.wait()
        log.close()

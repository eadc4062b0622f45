"""SIGTERM stops ``iris dev`` while a database call hangs at the Hrana server (issue 30): the
process exits within its shutdown deadline instead of waiting for the stuck round trip."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx

from iris_testing.llm_server import ScriptedLLM
from iris_testing.server import free_port, serve
from iris_testing.waiting import wait_until
from tests.fakes.hrana_fixtures import fresh_hrana_url
from tests.fakes.hrana_server import FaultRule

ROOT = Path(__file__).resolve().parents[2]
STUCK = "stuck-4be1"


def test_sigterm_ends_iris_dev_while_a_database_call_hangs(hrana, iris_home, tmp_path):
    llm = ScriptedLLM()
    llm.reply("never sent")
    port = free_port()
    log_path = tmp_path / "dev.log"
    with serve(llm.app) as model, log_path.open("w") as log:
        env = {
            **os.environ,
            "IRIS_MODEL": "openai/scripted",
            "IRIS_MODEL_API_BASE": f"{model.url}/v1",
            "IRIS_MODEL_API_KEY": "sk-x",
            "IRIS_API_KEY": "k",
            "IRIS_SHUTDOWN_SECONDS": "4",
            "PYTHONPATH": str(ROOT),
            "IRIS_DB_URL": fresh_hrana_url(hrana),
            "IRIS_DB_AUTH_TOKEN": hrana.token,
        }
        dev = subprocess.Popen(
            [sys.executable, "-m", "local_dev.cli", "dev", "--port", str(port), "--tick", "3600"],
            env=env,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:

            def healthy() -> bool:
                assert dev.poll() is None, log_path.read_text()
                try:
                    return httpx.get(f"{url}/healthz", timeout=2).status_code == 200
                except httpx.HTTPError:
                    return False

            wait_until(healthy, "iris dev to start", timeout=120)
            hanging = hrana.stats().get("fault_hang", 0)
            hrana.inject(FaultRule("hang", match=STUCK, seconds=600.0, times=1))

            def ask() -> None:
                with contextlib.suppress(httpx.HTTPError):  # the server goes away under it
                    httpx.post(
                        f"{url}/v1/chat/completions",
                        timeout=600,
                        headers={"Authorization": "Bearer k"},
                        json={
                            "model": "iris",
                            "user": "alice",
                            "messages": [{"role": "user", "content": STUCK}],
                        },
                    )

            threading.Thread(target=ask, daemon=True).start()
            wait_until(
                lambda: hrana.stats().get("fault_hang", 0) > hanging,
                "alice's inbox insert to hang at the database",
            )
            dev.send_signal(signal.SIGTERM)
            # generous: "exits at all" is what matters; the hang lasts 600 s
            code = dev.wait(timeout=120)
            assert code in (0, 128 + signal.SIGTERM), (code, log_path.read_text())
        finally:
            hrana.inject()
            if dev.poll() is None:
                dev.kill()
                dev.wait()

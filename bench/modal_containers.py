"""What each Modal container of Iris does before serving, measured in fresh processes here.

For each role (infra/modal_app.py) a fresh interpreter runs the container's start-up phases:
- web:    preload_web() [before the memory snapshot] → web_app() (opens the store, builds the
          FastAPI app) [after it]
- worker: preload_worker() (imports litellm) [before the snapshot] → build_cloud_runtime() [after]
- tick:   preload_common() [at module import: before the snapshot] → tick_once() on a store
          with nothing to do (the steady per-minute cost)
The "before snapshot" phase is what a memory snapshot replaces with a restore; the rest is paid
on every cold start. Store: a local libSQL file (a Turso round trip adds network latency).

Run: .venv/bin/python bench/modal_containers.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from _common import ROOT, summary

CHILD = r"""
import asyncio, json, sys, time
t0 = time.perf_counter()
import infra.cloud as cloud
role = sys.argv[1]
t1 = time.perf_counter()
if role == "web":
    cloud.preload_web(); t2 = time.perf_counter()
    app = cloud.web_app(); t3 = time.perf_counter()
    app.state.runtime.close()
elif role == "worker":
    cloud.preload_worker(); t2 = time.perf_counter()
    rt = cloud.build_cloud_runtime(); t3 = time.perf_counter()
    rt.close()
else:
    cloud.preload_common(); t2 = time.perf_counter()
    asyncio.run(cloud.tick_once()); t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "snapshot": t2 - t1, "after": t3 - t2}))
"""


def run(role: str, home: str) -> dict[str, float]:
    env = {**os.environ, "IRIS_HOME": home, "IRIS_MODEL": "openai/bench", "IRIS_API_KEY": "k",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(ROOT)}
    env.pop("IRIS_DISPATCHER", None)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, role], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=True)
    phases = json.loads(done.stdout.strip().splitlines()[-1])
    phases["process"] = time.perf_counter() - started
    return phases


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    home = tempfile.mkdtemp(prefix="iris-bench-modal-")
    run("tick", home)  # create and migrate the store once
    for role in ("web", "worker", "tick"):
        results = [run(role, home) for _ in range(runs)]
        print(f"{role}:")
        for phase, label in (("process", "whole fresh process"),
                             ("import", "import infra.cloud"),
                             ("snapshot", "before the snapshot (skipped on restore)"),
                             ("after", "after the snapshot (paid on every cold start)")):
            label = "tick_once() with nothing due" if role == "tick" and phase == "after" else label
            print(f"  {label:46} {summary([r[phase] for r in results])}")


if __name__ == "__main__":
    main()

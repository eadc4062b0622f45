"""A stand-in ``modal`` executable for ``iris deploy`` tests: put ``install(bin_dir)`` first on
PATH. It records each invocation (argv, the Iris variables it saw, the secret JSON it was
given) as a JSON line in $FAKE_MODAL_LOG and prints what ``modal deploy`` prints."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

DEPLOY_OUTPUT = """\
✓ Initialized. View run at https://modal.com/apps/acme/main/ap-1234567890
✓ Created objects.
├── 🔨 Created mount /work/infra/modal_app.py
├── 🔨 Created function Worker.*.
├── 🔨 Created function tick.
└── 🔨 Created function Web.*.
    └── app -> https://acme--{app}-web-app.modal.run
✓ App deployed in 4.213s! 🎉

View Deployment: https://modal.com/apps/acme/main/deployed/{app}
"""


def main() -> int:
    argv = sys.argv[1:]
    record = {"argv": argv, "env": {k: v for k, v in os.environ.items()
                                    if k.startswith(("IRIS_", "PYTHONPATH"))}}
    if "--from-json" in argv:
        path = Path(argv[argv.index("--from-json") + 1])
        record["secret"] = json.loads(path.read_text())
        record["secret_mode"] = oct(stat.S_IMODE(path.stat().st_mode))
    with open(os.environ["FAKE_MODAL_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps(record) + "\n")
    failing = os.environ.get("FAKE_MODAL_FAIL", "")
    if failing and argv[:1] == [failing]:
        print(f"Error: {failing} failed (simulated)")
        return 1
    if argv[:1] == ["deploy"]:
        print(DEPLOY_OUTPUT.format(app=os.environ.get("IRIS_MODAL_APP", "iris")), end="")
    return 0


def install(bin_dir: Path) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "modal"
    root = str(Path(__file__).resolve().parents[2])
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {root!r})\n"
                      "from tests.local_dev.fake_modal_cli import main\nsys.exit(main())\n")
    script.chmod(0o755)
    return script


def calls(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]

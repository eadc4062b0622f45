"""local_dev.tied: a child spawned tied dies when its parent is killed with SIGKILL, through
the parent-death signal and through the watchdog used where there is none."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.local_dev.test_no_orphans import alive, assert_all_gone

ROOT = Path(__file__).resolve().parents[2]

PARENT = textwrap.dedent("""
    import sys
    from local_dev.tied import spawn_tied

    child = spawn_tied([sys.executable, "-c", "import time; time.sleep(600)"],
                       watchdog=sys.argv[1] == "watchdog")
    print(child.pid, flush=True)
    sys.stdin.read()
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", ["pdeathsig", "watchdog"])
def test_child_dies_when_its_parent_is_killed(how):
    parent = subprocess.Popen([sys.executable, "-c", PARENT, how], cwd=ROOT, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        assert alive(child)
        parent.kill()
        parent.wait()
        assert_all_gone(child)
    finally:
        if alive(child):
            os.kill(child, 9)

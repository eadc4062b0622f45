"""The architecture's arrows and the type check are enforced, not just declared: `lint-imports`
and `mypy` (both run by `make test`) pass on the tree as it is and fail on a deliberate
violation planted in a copy of it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "functions", "infra", "local_dev", "sandboxes")
BIN = Path(sys.executable).parent


def copy_tree(into: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, into / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", into / "pyproject.toml")
    return into


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "lint-imports"), "--config", "pyproject.toml", "--no-cache"],
        cwd=tree, capture_output=True, text=True, env={"PYTHONPATH": str(tree), "PATH": ""},
        timeout=120,
    )


TYPE_ONLY = "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    {}\n"

# (case, the contract it breaks, the module it is planted in, the planted line)
VIOLATIONS = [
    ("entry point from core", "core-below-entry-points", "core/contracts/dispatch.py",
     "import functions.runtime\n"),
    ("feature from the store", "store-knows-no-rules", "core/store/leases.py",
     "import core.memory.book\n"),
    ("litellm on the ack path", "ack-path-light", "functions/webhooks.py", "import litellm\n"),
    ("agent from a sandbox", "sandboxes-know-no-agent", "sandboxes/options.py",
     "import core.store\n"),
    ("cycle", "no-cycles", "core/search/query.py", "import core.search.engine\n"),
    # Circles and upward arrows made of type-only imports count too
    # (exclude_type_checking_imports = false).
    ("type-only cycle", "no-cycles", "core/search/query.py",
     TYPE_ONLY.format("from core.search.engine import Hit")),
    ("type-only arrow up from contracts", "core-layers", "core/contracts/hooks.py",
     TYPE_ONLY.format("from core.tools import default_toolset")),
    ("feature importing the loop", "core-layers", "core/memory/book.py",
     TYPE_ONLY.format("from core.turn.loop import run_turn")),
    ("kernel importing the store", "core-layers", "core/messages.py",
     TYPE_ONLY.format("from core.store import Store")),
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_tree(tmp_path_factory.mktemp("tree"))


def test_the_tree_keeps_every_contract(tree: Path):
    result = lint_imports(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout


@pytest.mark.parametrize(("case", "contract", "path", "line"), VIOLATIONS,
                         ids=[case for case, *_ in VIOLATIONS])
def test_a_planted_violation_breaks_its_contract(tmp_path: Path, case: str, contract: str,
                                                 path: str, line: str):
    tree = copy_tree(tmp_path)
    module = tree / path
    module.write_text(module.read_text() + "\n" + line)
    result = lint_imports(tree)
    assert result.returncode != 0
    names = dict(line.split(" = ", 1) for line in _contract_names())
    broken = [line for line in result.stdout.splitlines() if line.endswith(" BROKEN")]
    assert f"{names[contract]} BROKEN" in broken, result.stdout


def _contract_names() -> list[str]:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return [f"{c['id']} = {c['name']}" for c in config["tool"]["importlinter"]["contracts"]]


def test_the_type_check_fails_on_a_type_error(tmp_path: Path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from core.store import Store\n\n\n"
        "def count(store: Store) -> int:\n"
        "    return store.sessions.count(42)  # a user id is a str\n"
    )
    result = subprocess.run(
        [str(BIN / "mypy"), "--config-file", str(ROOT / "pyproject.toml"), str(planted)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 1, result.stdout
    assert 'incompatible type "int"; expected "str"' in result.stdout


def test_the_rest_is_type_checked_at_the_default_level(tmp_path: Path):
    """tests/, iris_testing/, sandboxes/, local_dev/ and bench/ are checked by
    ``mypy --config-file mypy-tests.ini`` (make test): an annotated function's error fails."""
    planted = tmp_path / "planted_test.py"
    planted.write_text(
        "from iris_testing.matrix_api import FakeHomeserver\n\n\n"
        "def sent_count(home: FakeHomeserver) -> int:\n"
        "    return home.sent()  # a list, not an int\n"
    )
    result = subprocess.run(
        # the cache `make test`'s own step has just written (Makefile: MYPY_REST)
        [str(BIN / "mypy"), "--config-file", str(ROOT / "mypy-tests.ini"), "--cache-dir",
         str(ROOT / ".mypy_cache" / "rest"), str(planted)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 1, result.stdout
    assert 'Incompatible return value type (got "list[str]", expected "int")' in result.stdout

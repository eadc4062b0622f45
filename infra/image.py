"""The container image, described as data (``ImageRecipe``) and then built with ``modal.Image``.

Dependencies come from the project itself: ``pyproject.toml`` in a source checkout, else the
installed ``iris-agent`` distribution's requirements. Local files are read only on the machine
that deploys; inside a container the recipe is empty because the image already exists.
"""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DISTRIBUTION = "iris-agent"
PYTHON_VERSION = "3.11"
PACKAGES = ("core", "functions", "sandboxes", "infra")
REMOTE_SKILLS_DIR = "/root/skills"
BASE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "PYTHONUNBUFFERED": "1",
    "IRIS_SKILLS_DIR": REMOTE_SKILLS_DIR,
}

_EXTRA_MARKER = re.compile(r"extra\s*==")


def project_root() -> Path:
    return Path(__file__).resolve().parents[1]


def pyproject_path() -> Path | None:
    path = project_root() / "pyproject.toml"
    return path if path.is_file() else None


def project_dependencies(pyproject: Path | None = None) -> list[str]:
    """The runtime requirements of Iris, exactly as the project declares them."""
    pyproject = pyproject or pyproject_path()
    if pyproject is not None:
        with pyproject.open("rb") as handle:
            project = tomllib.load(handle).get("project", {})
        if project.get("name") == DISTRIBUTION:
            return list(project.get("dependencies", []))
    requires = importlib.metadata.requires(DISTRIBUTION) or []
    return [req for req in requires if not _EXTRA_MARKER.search(req)]


def no_deps_requirements(pyproject: Path | None = None) -> list[str]:
    """Packages to install without their declared dependencies ([tool.iris] no-deps)."""
    pyproject = pyproject or pyproject_path()
    if pyproject is None:
        return []
    with pyproject.open("rb") as handle:
        return list(tomllib.load(handle).get("tool", {}).get("iris", {}).get("no-deps", []))


def skills_source() -> Path | None:
    path = project_root() / "skills"
    return path if path.is_dir() else None


def _ignored(path: Path) -> bool:
    return "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo")


@dataclass(frozen=True)
class ImageRecipe:
    python_version: str = PYTHON_VERSION
    pip: tuple[str, ...] = ()
    pip_no_deps: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    local_dirs: dict[str, str] = field(default_factory=dict)  # local path -> path in the image
    python_sources: tuple[str, ...] = PACKAGES


def recipe(*, local: bool) -> ImageRecipe:
    """The image Iris runs in. ``local``: this process deploys (reads pyproject and skills)."""
    if not local:
        return ImageRecipe(env=dict(BASE_ENV))
    skills = skills_source()
    return ImageRecipe(
        pip=tuple(project_dependencies()),
        pip_no_deps=tuple(no_deps_requirements()),
        env=dict(BASE_ENV),
        local_dirs={str(skills): REMOTE_SKILLS_DIR} if skills else {},
    )


def build_image(spec: ImageRecipe, modal: Any) -> Any:
    """Debian slim + the project's dependencies + environment, then local files, with the
    project's packages added last (Modal requires mounts after every build step)."""
    image = modal.Image.debian_slim(python_version=spec.python_version)
    if spec.pip:
        image = image.pip_install(*spec.pip)
    if spec.pip_no_deps:
        image = image.pip_install(*spec.pip_no_deps, extra_options="--no-deps")
    image = image.env(spec.env)
    for local, remote in spec.local_dirs.items():
        image = image.add_local_dir(local, remote, ignore=_ignored)
    return image.add_local_python_source(*spec.python_sources, ignore=_ignored)

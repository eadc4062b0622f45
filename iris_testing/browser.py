"""A real headless Chromium for the dashboard's browser tests, driven by Playwright's Python
API pointed at the system's Chromium (Debian's ``chromium``; ``playwright install`` is never
run). ``IRIS_CHROMIUM`` names another executable."""

from __future__ import annotations

import os
import shutil

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path(named: str | None = None) -> str | None:
    named = named or os.environ.get("IRIS_CHROMIUM")
    if named:
        return named if os.access(named, os.X_OK) else None
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


def missing_browser(named: str | None = None) -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install -e '.[dev]')"
    if chromium_path(named) is None:
        return "no Chromium executable (apt-get install chromium, or set IRIS_CHROMIUM)"
    return None

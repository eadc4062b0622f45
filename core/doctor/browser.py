"""``iris doctor``'s browser line: whether the browser tools can start Chromium where they run."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from core.config import Settings
    from core.doctor.report import Report


def check_browser(report: Report, settings: Settings) -> None:
    limits = (
        f"{settings.browser_action_timeout:g} s per action, "
        f"{settings.browser_pages_per_turn} actions per turn"
    )
    backend = settings.sandbox_backend
    cdp_url = settings.secret("browser_cdp_url")
    if cdp_url:
        parts = urlsplit(cdp_url)
        where = f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")
        report.add(
            "ok",
            "browser",
            f"a hosted browser at {where} (IRIS_BROWSER_CDP_URL), not Chromium in the "
            f"{backend} sandbox; {limits}",
        )
    elif backend == "modal":
        report.add("ok", "browser", f"Chromium from the Modal sandbox image; {limits}")
    elif backend == "daytona" and (settings.daytona_snapshot or "").startswith("iris-browser"):
        report.add(
            "ok",
            "browser",
            f"Chromium from Daytona snapshot {settings.daytona_snapshot} "
            f"(iris daytona browser-snapshot); {limits}",
        )
    elif backend == "daytona":
        where = settings.sandbox_image or settings.daytona_snapshot or "Daytona's default snapshot"
        report.add(
            "warning",
            "browser",
            f"runs in the Daytona sandbox from {where}, which may lack Chromium; {limits}",
            "run `iris daytona browser-snapshot` once, then set "
            "IRIS_DAYTONA_SNAPSHOT=iris-browser-1",
        )
    elif shutil.which(settings.browser_chromium) and shutil.which("python3"):
        report.add("ok", "browser", f"Chromium in the local sandbox; {limits}")
    else:
        report.add(
            "warning",
            "browser",
            f"no {settings.browser_chromium!r} or python3 on this machine: "
            "the browser tools will fail",
            "apt-get install chromium (or set IRIS_BROWSER_CHROMIUM)",
        )

"""``iris doctor``: load the configuration, run its checks (``core.doctor.checks``) and, for a
deployment, the cloud's."""

from __future__ import annotations

from collections.abc import Mapping

from core.config import load_settings
from core.doctor.checks import ModelProbe, check_configuration, environment_of
from core.doctor.report import Finding, Report
from core.errors import ConfigError

__all__ = ["Finding", "Report", "run_checks"]


def _modal_token_found(environ: Mapping[str, str]) -> bool:
    from infra.modal_cli import modal_token

    return modal_token(environ) is not None


def run_checks(
    env: Mapping[str, str] | None = None, *, online: bool = False, cloud: bool = False,
    probe: ModelProbe | None = None,
) -> Report:
    report = Report()
    try:
        settings = load_settings(env)
    except ConfigError as exc:
        report.add("error", "config", str(exc),
                   "fix that value in iris.yaml or .env, or run `iris setup`")
        return report
    where = settings.config_path if settings.config_path and settings.config_path.exists() else None
    report.add("ok", "config", f"loaded {where or 'defaults (no iris.yaml)'}")
    check_configuration(report, settings, environment_of(settings, env), online=online,
                        cloud=cloud, probe=probe, modal_token=_modal_token_found)
    if cloud:
        from infra.cloud import cloud_problems

        for problem in cloud_problems(settings):
            if problem.setting != "model":
                report.add("error", f"cloud: {problem.setting}", problem.message, problem.fix)
    return report

"""``iris doctor``'s browser line."""

from core.config import Settings
from core.doctor.browser import check_browser
from core.doctor.report import Report


def line(settings: Settings):
    report = Report()
    check_browser(report, settings)
    (finding,) = report.findings
    return finding


def test_a_local_chromium_is_found_or_missed(tmp_path):
    found = line(Settings(home=tmp_path, browser_chromium="sh"))
    assert found.level == "ok" and "local sandbox" in found.message
    missing = line(Settings(home=tmp_path, browser_chromium="no-such-browser-here"))
    assert missing.level == "warning" and "'no-such-browser-here'" in missing.message


def test_remote_backends_say_where_chromium_comes_from(tmp_path):
    assert "Modal sandbox image" in line(Settings(home=tmp_path, sandbox_backend="modal")).message
    daytona = line(Settings(home=tmp_path, sandbox_backend="daytona"))
    assert daytona.level == "warning" and "iris daytona browser-snapshot" in daytona.fix
    assert "Daytona's default snapshot, which may lack Chromium" in daytona.message
    built = line(Settings(home=tmp_path, sandbox_backend="daytona",
                          daytona_snapshot="iris-browser-1"))
    assert built.level == "ok" and "Chromium from Daytona snapshot iris-browser-1" in built.message


def test_a_hosted_browser_is_named_without_its_key(tmp_path):
    hosted = line(
        Settings(home=tmp_path, browser_cdp_url="wss://connect.example.com:443?apiKey=sk-secret")
    )
    assert hosted.level == "ok"
    assert (
        "hosted browser at wss://connect.example.com:443 (IRIS_BROWSER_CDP_URL)" in hosted.message
    )
    assert "sk-secret" not in hosted.message and "local sandbox" in hosted.message

"""The browser's network policy where connections are made (core.browser.netguard), with a real
headless Chromium run by the driver: a name that rebinds from a public address to loopback never
reaches loopback; WebSockets go to allowed hosts only."""

from __future__ import annotations

import ipaddress
import os
import socket

import pytest

from core.browser import driver, netguard
from core.browser.sandboxed import command_for
from core.config import Settings
from iris_testing.browser import chromium_path
from iris_testing.browser_site import BrowserSite
from iris_testing.server import serve
from iris_testing.web_fakes import FakeSite
from iris_testing.ws_server import HelloSocket

PUBLIC = "93.184.215.14"

# The driver waits for Chromium's events with timed waits (queue.get(timeout=…)). Under
# libfaketime (CI's second pass) such a wait never runs out, so these hang there; the first
# pass runs them on the real clock (as tests/core/lanes/test_pool.py's timed-wait tests).
# The driver runs in this process in these tests, and its waits (a queue's get with a timeout)
# never run out under libfaketime: a test whose page leaves the driver waiting for quiet (a
# refused navigation, a WebSocket) would hang there. They run in the first pass.
timed_waits_expire = pytest.mark.skipif(
    bool(os.environ.get("FAKETIME")),
    reason="timed waits never run out under libfaketime; run in the first pass")



def in_chromium(test):
    for mark in (
        pytest.mark.browser,
        pytest.mark.process,
        pytest.mark.skipif(chromium_path() is None, reason="no Chromium executable"),
    ):
        test = mark(test)
    return test


def answers(*addresses, only=None):
    """A resolver that gives each address once in turn, then the last one forever. With
    ``only``, that name alone: Chromium looks up hosts of its own as it starts (Google's
    sign-in and push services), which get a documentation address, never connected to."""
    given: list[str] = []

    def resolve(host, port, type=0):
        if only is not None and host != only:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.0.2.1", port))]
        addr = addresses[min(len(given), len(addresses) - 1)]
        given.append(addr)
        family = socket.AF_INET6 if ":" in addr else socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (addr, port))]

    resolve.given = given
    return resolve


def test_one_private_address_among_public_ones_refuses_the_host(monkeypatch):
    monkeypatch.setattr(netguard, "RESOLVE", answers(PUBLIC))
    assert netguard.pinned("example.com", 443, []) == [(socket.AF_INET, (PUBLIC, 443))]

    def mixed(host, port, type=0):
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", (PUBLIC, port)),
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::ffff:10.0.0.7", port, 0, 0)),
        ]

    monkeypatch.setattr(netguard, "RESOLVE", mixed)
    with pytest.raises(netguard.Refused, match=r"10\.0\.0\.7, which is not a public address"):
        netguard.pinned("example.com", 443, [])
    monkeypatch.setattr(netguard, "RESOLVE", answers("169.254.169.254"))
    with pytest.raises(netguard.Refused, match="not a public address"):
        netguard.check_url("http://metadata.example/", [])
    with pytest.raises(netguard.Refused, match="local name"):
        netguard.check_url("ws://intranet.internal/", [], resolve=False)
    netguard.check_url("http://intranet.internal:8080/", ["intranet.internal:8080"])


def run_driver(tmp_path, monkeypatch, allow, action, **args):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".iris/browser").mkdir(parents=True, exist_ok=True)
    settings = Settings(home=tmp_path / "home", web_allow_hosts=allow)
    cmd = command_for(settings, action, args)
    cmd["chromium"] = chromium_path()
    return driver.run(cmd)


def loopback_name():
    """This machine's name when it resolves to a loopback address (most do, via /etc/hosts)."""
    name = socket.gethostname()
    try:
        infos = socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)
    except OSError:
        return None
    addrs = {ipaddress.ip_address(i[4][0].split("%")[0]) for i in infos}
    return name if addrs and all(a.is_loopback for a in addrs) else None


@timed_waits_expire
@in_chromium
@pytest.mark.skipif(loopback_name() is None, reason="this machine's name is not loopback")
def test_a_name_that_rebinds_to_loopback_never_reaches_it(tmp_path, monkeypatch):
    """The name answers a public address to the first lookup (the check of the URL the model
    gave) and loopback afterwards; Chromium itself would resolve it to loopback. Only the
    address the guard checked is ever connected to, so the intranet sees nothing."""
    name = loopback_name()
    intranet = FakeSite()
    with serve(intranet.app) as inner:
        rebinding = answers(PUBLIC, "127.0.0.1", only=name)
        monkeypatch.setattr(netguard, "RESOLVE", rebinding)
        out = run_driver(tmp_path, monkeypatch, [], "navigate", url=f"http://{name}:{inner.port}/")
    assert intranet.hits == []
    assert rebinding.given[:2] == [PUBLIC, "127.0.0.1"]
    shown = out["refused"]
    assert any("resolves to 127.0.0.1, which is not a public address" in r for r in shown), out


@timed_waits_expire
@in_chromium
def test_only_what_the_page_asked_for_is_listed_as_refused(tmp_path, monkeypatch):
    """Chromium connects on its own too (Google's sign-in and push services), whatever the
    page does; the guard refuses those like any other, but they are not the page's and the
    model is not shown them. Such a connection is made here through the guard during the
    action, to a name that resolves to a private address."""
    site = BrowserSite(elsewhere="http://10.1.2.3/")
    real, acting, answered = netguard.RESOLVE, driver.act, []

    def resolve(host, port, type=0):  # the service's name, the same wherever this runs
        if host == "accounts.example.com":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.9.9.9", port))]
        return real(host, port, type=type)

    def act(b, cmd, state):
        with socket.create_connection(("127.0.0.1", b.guard.port), timeout=30) as background:
            background.sendall(b"CONNECT accounts.example.com:443 HTTP/1.1\r\n\r\n")
            answered.append(background.recv(1024))
        acting(b, cmd, state)
        assert any(h == "accounts.example.com" for h, _, _ in b.guard_refused)

    monkeypatch.setattr(netguard, "RESOLVE", resolve)
    monkeypatch.setattr(driver, "act", act)
    with site.served() as s:
        out = run_driver(tmp_path, monkeypatch, [f"127.0.0.1:{s.port}"], "navigate",
                         url=f"{s.url}/embeds")
    assert b" 403 " in answered[0]  # refused, as the page's own would be
    assert out["ok"] and "text: Pictures" in out["lines"], out
    assert any("10.1.2.3" in r for r in out["refused"]), out
    assert not any("accounts.example.com" in r for r in out["refused"]), out


@timed_waits_expire
@in_chromium
def test_websockets_reach_allowed_hosts_only(tmp_path, monkeypatch):
    site, allowed, trap = BrowserSite(), HelloSocket("hello"), HelloSocket("intranet secrets")
    try:
        with site.served() as s:
            allow = [f"127.0.0.1:{s.port}", f"127.0.0.1:{allowed.port}"]
            ok = run_driver(
                tmp_path, monkeypatch, allow, "navigate", url=f"{s.url}/socket?to={allowed.url}"
            )
            assert "text: socket said hello" in ok["lines"], ok
            refused = run_driver(
                tmp_path, monkeypatch, allow, "navigate", url=f"{s.url}/socket?to={trap.url}"
            )
    finally:
        allowed.close()
        trap.close()
    assert allowed.connections >= 1 and trap.connections == 0
    assert "text: socket failed" in refused["lines"], refused
    assert any(f"127.0.0.1:{trap.port}" in r for r in refused["refused"]), refused

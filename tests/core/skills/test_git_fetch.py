"""A git URL a user gives the dashboard: https only, checked like a web fetch, and git's
connection pinned to the checked address."""

import asyncio
import ipaddress
import socket

import pytest

from core.errors import IrisUsageError
from core.skills.git_fetch import CheckedRepo, check_repo_url, clone
from core.web.fetch import FetchPolicy

pytestmark = pytest.mark.process  # its tools run shells or processes


def resolving_to(*addresses):
    async def resolver(host, port):
        return [ipaddress.ip_address(a) for a in addresses]
    return resolver


def check(url, resolver, policy=FetchPolicy()):
    return asyncio.run(check_repo_url(url, policy, resolver=resolver))


def test_a_public_https_url_is_pinned_to_the_checked_address():
    repo = check("https://git.example.org/team/skills.git", resolving_to("93.184.215.14"))
    assert repo == CheckedRepo(url="https://git.example.org/team/skills.git",
                               pin="git.example.org:443:93.184.215.14")
    v6 = check("https://git.example.org:8443/s.git", resolving_to("2606:2800:21f:cb07::1"))
    assert v6.pin == "git.example.org:8443:[2606:2800:21f:cb07::1]"


@pytest.mark.parametrize(("url", "addresses", "why"), [
    ("http://git.example.org/s.git", ("93.184.215.14",), "only https://"),
    ("ssh://git@git.example.org/s.git", ("93.184.215.14",), "only http and https"),
    ("git@github.com:org/skills.git", ("93.184.215.14",), "cannot import"),
    ("file:///etc/skills", (), "only http and https"),
    ("https://inside.example.org/s.git", ("10.0.0.5",), "10.0.0.5"),
    ("https://meta.example.org/s.git", ("169.254.169.254",), "169.254.169.254"),
    ("https://mixed.example.org/s.git", ("93.184.215.14", "127.0.0.1"), "127.0.0.1"),
    ("https://[::1]/s.git", (), "::1"),
    ("https://u:p@git.example.org/s.git", ("93.184.215.14",), "user name or password"),
])
def test_refused_before_anything_is_fetched(url, addresses, why):
    asked = []

    async def resolver(host, port):
        asked.append(host)
        return [ipaddress.ip_address(a) for a in addresses]

    with pytest.raises(IrisUsageError) as caught:
        check(url, resolver)
    assert why in str(caught.value)


def test_git_connects_only_to_the_pinned_address(tmp_path):
    """The URL names a host that does not resolve; the pin sends git to a closed port on
    loopback, which it reports: the name was never looked up again."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    repo = CheckedRepo(url=f"https://skills.invalid:{port}/s.git",
                       pin=f"skills.invalid:{port}:127.0.0.1")
    with pytest.raises(IrisUsageError, match=r"git clone of .* failed") as caught:
        clone(repo, tmp_path / "into", seconds=60)
    assert "Failed to connect to skills.invalid" in str(caught.value)
    assert not (tmp_path / "into").exists()

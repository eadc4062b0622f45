"""The server-side request forgery table: address spellings and redirect tricks, all refused,
through the real fetcher (real HTTP on loopback for the redirects)."""

import asyncio
import ipaddress

import pytest

from core.addresses import AddressRefused, inet_aton, refusal
from core.web.fetch import FetchFailed, FetchPolicy, fetch
from iris_testing.server import serve
from iris_testing.web_fakes import FakeSite

SPELLINGS = [
    "http://127.0.0.1/",
    "http://127.1/",  # a.b form
    "http://127.0.1/",  # a.b.c form
    "http://2130706433/",  # decimal
    "http://0x7f000001/",  # hexadecimal
    "http://0177.0.0.1/",  # octal
    "http://017700000001/",  # octal, one number
    "http://0x7f.0.0.1/",  # mixed
    "http://0/",  # 0.0.0.0
    "http://0.0.0.0:8080/",
    "http://[::1]/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",  # IPv4-mapped
    "http://[::ffff:7f00:1]/",  # IPv4-mapped, hex
    "http://[0:0:0:0:0:ffff:169.254.169.254]/",  # mapped metadata
    "http://[::127.0.0.1]/",  # IPv4-compatible
    "http://[64:ff9b::a9fe:a9fe]/",  # NAT64 of 169.254.169.254
    "http://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
    "http://[fe80::1]/",  # link-local
    "http://[fd00:ec2::254]/latest/meta-data/",  # AWS IPv6 metadata
    "http://[ff02::1]/",  # multicast
    "http://169.254.169.254/latest/meta-data/iam/",  # metadata
    "http://100.100.100.200/latest/meta-data/",  # Alibaba metadata
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",  # carrier-grade NAT
    "http://224.0.0.1/",  # multicast
    "http://localhost/",
    "http://LOCALHOST./",
    "http://api.localhost/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "https://instance-data/latest/",
    "http://user:pw@example.com/",  # credentials in the URL
    "file:///etc/passwd",
    "gopher://127.0.0.1:25/",
    "ftp://example.com/",
    "http://[::1",  # malformed
]


def refused(url, policy=FetchPolicy(), **kw):
    with pytest.raises(AddressRefused) as info:
        asyncio.run(fetch(url, policy, **kw))
    return str(info.value)


@pytest.mark.parametrize("url", SPELLINGS)
def test_every_spelling_is_refused(url):
    refused(url)


def test_the_table_is_big_enough():
    assert len(SPELLINGS) >= 20


@pytest.mark.parametrize(("text", "address"), [
    ("2130706433", "127.0.0.1"), ("0x7f.1", "127.0.0.1"), ("0177.0.0.01", "127.0.0.1"),
    ("10.65535", "10.0.255.255"), ("1.2.3.4", "1.2.3.4"), ("0", "0.0.0.0"),
])
def test_inet_aton_reads_what_the_c_library_reads(text, address):
    assert inet_aton(text) == ipaddress.IPv4Address(address)


@pytest.mark.parametrize("text", ["256.1.1.1", "1.2.3.4.5", "08.1.1.1", "0x", "example.com",
                                  "1.2.3.256", "4294967296"])
def test_inet_aton_rejects_non_addresses(text):
    assert inet_aton(text) is None or text == "0x"


def test_public_addresses_pass():
    for text in ("93.184.216.34", "2606:4700::1111", "8.8.8.8"):
        assert refusal(ipaddress.ip_address(text)) is None


def test_a_name_resolving_to_any_private_address_is_refused():
    async def resolver(host, port):
        return [ipaddress.ip_address("93.184.216.34"), ipaddress.ip_address("10.0.0.7")]

    assert "resolves to 10.0.0.7" in refused("http://mixed.example/", resolver=resolver)


def test_a_name_resolving_to_mapped_loopback_is_refused():
    async def resolver(host, port):
        return [ipaddress.ip_address("::ffff:127.0.0.1")]

    assert "loopback" in refused("https://sneaky.example/", resolver=resolver)


@pytest.fixture(scope="module")
def sites():
    origin, canary = FakeSite(), FakeSite()
    with serve(origin.app) as o, serve(canary.app) as c:
        yield origin, o, canary, c


def redirect_tricks(o, c):
    """Targets an allowed origin redirects to; none may be reached."""
    return [
        f"http://127.0.0.1:{c.port}/article",  # same address, a port not on the allow list
        f"http://localhost:{o.port}/article",  # same server by another name
        f"http://[::1]:{o.port}/article",
        f"http://[::ffff:127.0.0.1]:{o.port}/article",
        f"http://2130706433:{o.port}/article",
        f"http://0x7f.1:{c.port}/article",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/latest/meta-data/",
        f"//localhost:{c.port}/article",  # scheme-relative
        "file:///etc/passwd",
        "gopher://127.0.0.1:6379/_INFO",
    ]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirects_to_forbidden_places_are_refused(sites, status):
    origin, o, canary, c = sites
    policy = FetchPolicy(allow_hosts=frozenset({f"127.0.0.1:{o.port}"}))
    before = len(canary.hits)
    for target in redirect_tricks(o, c):
        url = httpx_url(o, target, status)
        refused(url, policy)
    assert len(canary.hits) == before  # nothing reached the other server
    assert all(host == f"127.0.0.1:{o.port}" for _, host in origin.hits)


def httpx_url(o, target, status):
    import httpx

    return str(httpx.URL(f"{o.url}/redirect", params={"to": target, "status": status}))


def test_an_allowed_redirect_is_followed_and_rechecked(sites):
    _origin, o, _, _ = sites
    policy = FetchPolicy(allow_hosts=frozenset({f"127.0.0.1:{o.port}"}))
    page = asyncio.run(fetch(httpx_url(o, "/notes.txt", 302), policy))
    assert page.body == b"plain notes\nline two\n" and page.url.endswith("/notes.txt")


def test_a_redirect_loop_stops(sites):
    _, o, _, _ = sites
    policy = FetchPolicy(allow_hosts=frozenset({f"127.0.0.1:{o.port}"}), max_redirects=3)
    with pytest.raises(FetchFailed, match="more than 3 redirects"):
        asyncio.run(fetch(f"{o.url}/loop/0", policy))


def test_the_checked_address_is_the_one_connected_to(sites):
    """No DNS rebinding: the name is resolved once per hop, and the connection goes to the
    address that was checked (a second answer, 127.0.0.2, has no server behind it)."""
    origin, o, _, _ = sites
    answers = [ipaddress.ip_address("127.0.0.1")]
    calls = []

    async def flipping(host, port):
        calls.append(host)
        return [answers[0] if len(calls) == 1 else ipaddress.ip_address("127.0.0.2")]

    policy = FetchPolicy(allow_hosts=frozenset({f"rebind.test:{o.port}"}))
    page = asyncio.run(fetch(f"http://rebind.test:{o.port}/notes.txt", policy,
                             resolver=flipping))
    assert page.body.startswith(b"plain notes")
    assert calls == ["rebind.test"]
    assert origin.hits[-1] == ("/notes.txt", f"rebind.test:{o.port}")


def test_an_allowed_name_still_gets_no_other_exemption(sites):
    _, o, _, _ = sites
    policy = FetchPolicy(allow_hosts=frozenset({"intranet.test"}))

    async def resolver(host, port):
        return [ipaddress.ip_address("127.0.0.1")]

    assert asyncio.run(fetch(f"http://intranet.test:{o.port}/notes.txt", policy,
                             resolver=resolver)).body.startswith(b"plain")
    assert "loopback" in refused(f"http://other.test:{o.port}/", policy, resolver=resolver)


def test_caps_on_bytes_type_and_status(sites):
    _, o, _, _ = sites
    policy = FetchPolicy(allow_hosts=frozenset({f"127.0.0.1:{o.port}"}), max_bytes=50_000)
    big = asyncio.run(fetch(f"{o.url}/endless", policy))
    assert big.truncated and len(big.body) == 50_000
    with pytest.raises(FetchFailed, match="image/png is not text, HTML or PDF"):
        asyncio.run(fetch(f"{o.url}/photo.png", policy))
    with pytest.raises(FetchFailed, match="HTTP 404"):
        asyncio.run(fetch(f"{o.url}/missing", policy))

"""One contract for both object stores: a local directory and S3 (moto's server over HTTP)."""

from __future__ import annotations

import hashlib
import multiprocessing
import subprocess
import sys
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from core.store.objects import (
    ObjectNotFound,
    ObjectStore,
    ObjectStoreError,
    PreconditionFailed,
    StoredObject,
    open_object_store,
)
from core.store.objects_s3 import S3ObjectStore
from tests.fakes.s3 import MotoS3

ALICE = "telegram:4242"
BOB = "slack:T01-U02"
S3_PREFIX = "tenant-data"
WRITERS = 16


@pytest.fixture(params=["local", "s3"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "local":
        return str(tmp_path / "objects")
    bucket = request.getfixturevalue("s3_bucket")
    return f"s3://{bucket}/{S3_PREFIX}"


@pytest.fixture
def open_store(backend: str, request: pytest.FixtureRequest) -> Callable[[], ObjectStore]:
    endpoint = None
    if backend.startswith("s3://"):
        endpoint = request.getfixturevalue("moto_s3").endpoint_url
    return lambda: open_object_store(backend, s3_endpoint_url=endpoint, s3_region="us-east-1")


@pytest.fixture
def store(open_store: Callable[[], ObjectStore]) -> ObjectStore:
    return open_store()


def race(writers: int, attempt: Callable[[int], None]) -> None:
    barrier = threading.Barrier(writers)

    def run(index: int) -> None:
        barrier.wait(timeout=10)
        attempt(index)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)


def test_round_trip(store: ObjectStore) -> None:
    assert isinstance(store, ObjectStore)
    etag = store.put(ALICE, "notes/today.md", b"buy milk")

    assert etag == f'"{hashlib.md5(b"buy milk").hexdigest()}"'
    assert store.get(ALICE, "notes/today.md") == StoredObject(data=b"buy milk", etag=etag)
    assert store.head(ALICE, "notes/today.md") == etag

    newer = store.put(ALICE, "notes/today.md", b"buy oat milk")
    assert newer != etag
    assert store.get(ALICE, "notes/today.md") == StoredObject(data=b"buy oat milk", etag=newer)
    assert store.put(ALICE, "notes/copy.md", b"buy milk") == etag


def test_binary_and_empty_data(store: ObjectStore) -> None:
    blob = bytes(range(256)) * 64 + b"\x00\xff\xfe"
    store.put(ALICE, "attachments/blob.bin", blob)
    store.put(ALICE, "attachments/empty", b"")

    assert store.get(ALICE, "attachments/blob.bin").data == blob
    assert store.get(ALICE, "attachments/empty").data == b""


def test_unicode_keys(store: ObjectStore) -> None:
    store.put(ALICE, "skills/café/SKILL.md", b"x")
    assert store.list(ALICE) == ["skills/café/SKILL.md"]
    assert store.get(ALICE, "skills/café/SKILL.md").data == b"x"


def test_list_with_prefix(store: ObjectStore) -> None:
    keys = ["skills/b/SKILL.md", "skills/a/SKILL.md", "exports/2024.json", "skillset", "zeta"]
    for key in keys:
        store.put(ALICE, key, key.encode())

    assert store.list(ALICE) == sorted(keys)
    assert store.list(ALICE, "skills/") == ["skills/a/SKILL.md", "skills/b/SKILL.md"]
    assert store.list(ALICE, "skill") == ["skills/a/SKILL.md", "skills/b/SKILL.md", "skillset"]
    assert store.list(ALICE, "skills/a/SKI") == ["skills/a/SKILL.md"]
    assert store.list(ALICE, "exports/2024.json") == ["exports/2024.json"]
    assert store.list(ALICE, "nothing/") == []
    assert store.list(BOB) == []


def test_missing_key(store: ObjectStore) -> None:
    store.put(ALICE, "present", b"here")

    with pytest.raises(ObjectNotFound):
        store.get(ALICE, "absent")
    assert store.head(ALICE, "absent") is None
    with pytest.raises(ObjectNotFound):
        store.delete(ALICE, "absent")
    with pytest.raises(ObjectNotFound):
        store.delete(ALICE, "absent", if_match=store.head(ALICE, "present"))
    with pytest.raises(ObjectNotFound):
        store.get(ALICE, "present/below")
    assert issubclass(ObjectNotFound, ObjectStoreError)


def test_create_only(store: ObjectStore) -> None:
    etag = store.put(ALICE, "lease", b"first", if_none_match=True)

    with pytest.raises(PreconditionFailed):
        store.put(ALICE, "lease", b"second", if_none_match=True)
    assert store.get(ALICE, "lease") == StoredObject(data=b"first", etag=etag)


def test_stale_etag_loses(store: ObjectStore) -> None:
    first = store.put(ALICE, "memory.json", b"v1")
    second = store.put(ALICE, "memory.json", b"v2", if_match=first)

    with pytest.raises(PreconditionFailed):
        store.put(ALICE, "memory.json", b"v3 from a stale reader", if_match=first)
    assert store.get(ALICE, "memory.json") == StoredObject(data=b"v2", etag=second)

    third = store.put(ALICE, "memory.json", b"v3", if_match=second.strip('"'))
    assert store.get(ALICE, "memory.json").etag == third

    with pytest.raises(PreconditionFailed):
        store.put(ALICE, "never-written", b"x", if_match=first)
    assert store.head(ALICE, "never-written") is None


def test_conflicting_conditions_are_refused(store: ObjectStore) -> None:
    with pytest.raises(ValueError, match="cannot be combined"):
        store.put(ALICE, "k", b"x", if_match='"abc"', if_none_match=True)


def test_delete(store: ObjectStore) -> None:
    store.put(ALICE, "skills/old/SKILL.md", b"old")
    store.put(ALICE, "skills/keep/SKILL.md", b"keep")

    store.delete(ALICE, "skills/old/SKILL.md")

    with pytest.raises(ObjectNotFound):
        store.get(ALICE, "skills/old/SKILL.md")
    assert store.list(ALICE) == ["skills/keep/SKILL.md"]
    store.put(ALICE, "skills/old", b"now a plain key")
    assert store.get(ALICE, "skills/old").data == b"now a plain key"


def test_conditional_delete(store: ObjectStore) -> None:
    first = store.put(ALICE, "draft", b"v1")
    second = store.put(ALICE, "draft", b"v2")

    with pytest.raises(PreconditionFailed):
        store.delete(ALICE, "draft", if_match=first)
    assert store.get(ALICE, "draft").data == b"v2"

    store.delete(ALICE, "draft", if_match=second)
    assert store.head(ALICE, "draft") is None


def test_tenancy(store: ObjectStore) -> None:
    etag = store.put(ALICE, "notes/secret", b"alice only")

    with pytest.raises(ObjectNotFound):
        store.get(BOB, "notes/secret")
    assert store.head(BOB, "notes/secret") is None
    assert store.list(BOB) == []
    assert store.list(BOB, "notes/") == []
    with pytest.raises(ObjectNotFound):
        store.delete(BOB, "notes/secret")
    with pytest.raises(PreconditionFailed):
        store.put(BOB, "notes/secret", b"bob's", if_match=etag)

    store.put(BOB, "notes/secret", b"bob's own")
    assert store.get(ALICE, "notes/secret") == StoredObject(data=b"alice only", etag=etag)
    assert store.get(BOB, "notes/secret").data == b"bob's own"


BAD_KEYS = [
    "",
    f"../{ALICE}/notes/secret",
    "../../users/x",
    "/abs",
    "a//b",
    "a/./b",
    "a/..",
    "..",
    ".",
    "a/",
    "a\\b",
    "a\x00b",
    "\udc80",
    "x" * 1025,
    "ok/.iris-tmp-123",
]
BAD_USERS = ["", ".", "..", "a/b", "a b", f"bob/../{ALICE}", "a..b", "x" * 129, "bob\n"]


BAD_PREFIXES = ["/abs", "../", f"../{ALICE}/", "a//", "..", "a\\b"]


def accepted(calls: dict[str, Callable[[], object]]) -> list[str]:
    """The names of the calls that did not raise ValueError."""
    names = []
    for name, call in calls.items():
        try:
            call()
        except ValueError:
            continue
        names.append(name)
    return names


def test_bad_keys_are_refused(store: ObjectStore) -> None:
    store.put(ALICE, "notes/secret", b"alice only")
    calls: dict[str, Callable[[], object]] = {}
    for key in BAD_KEYS:
        calls |= {
            f"get {key!r}": partial(store.get, BOB, key),
            f"head {key!r}": partial(store.head, BOB, key),
            f"put {key!r}": partial(store.put, BOB, key, b"x"),
            f"delete {key!r}": partial(store.delete, BOB, key),
        }
    for prefix in BAD_PREFIXES:
        calls[f"list {prefix!r}"] = partial(store.list, BOB, prefix)

    assert accepted(calls) == []
    assert store.list(BOB) == []
    assert store.get(ALICE, "notes/secret").data == b"alice only"


def test_bad_user_ids_are_refused(store: ObjectStore) -> None:
    calls: dict[str, Callable[[], object]] = {}
    for user in BAD_USERS:
        calls |= {
            f"get {user!r}": partial(store.get, user, "k"),
            f"head {user!r}": partial(store.head, user, "k"),
            f"put {user!r}": partial(store.put, user, "k", b"x"),
            f"delete {user!r}": partial(store.delete, user, "k"),
            f"list {user!r}": partial(store.list, user),
        }
    assert accepted(calls) == []


def test_racing_writers_with_one_etag(open_store: Callable[[], ObjectStore]) -> None:
    store = open_store()
    base = store.put(ALICE, "counter", b"base")
    winners: list[tuple[int, str]] = []
    losers: list[int] = []

    def attempt(index: int) -> None:
        try:
            winners.append((index, store.put(ALICE, "counter", f"{index}".encode(), if_match=base)))
        except PreconditionFailed:
            losers.append(index)

    race(WRITERS, attempt)

    assert len(winners) == 1 and len(losers) == WRITERS - 1
    index, etag = winners[0]
    assert store.get(ALICE, "counter") == StoredObject(data=f"{index}".encode(), etag=etag)


def test_racing_creators(open_store: Callable[[], ObjectStore]) -> None:
    store = open_store()
    winners: list[int] = []

    def attempt(index: int) -> None:
        try:
            store.put(ALICE, "lease", f"{index}".encode(), if_none_match=True)
            winners.append(index)
        except PreconditionFailed:
            pass

    race(WRITERS, attempt)

    assert len(winners) == 1
    assert open_store().get(ALICE, "lease").data == f"{winners[0]}".encode()


def test_layout(
    store: ObjectStore, backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store.put(ALICE, "skills/x/SKILL.md", b"layout")

    if backend.startswith("s3://"):
        client = request.getfixturevalue("moto_s3").client()
        listed = client.list_objects_v2(Bucket=backend.removeprefix("s3://").split("/")[0])
        assert [item["Key"] for item in listed["Contents"]] == [
            f"{S3_PREFIX}/users/{ALICE}/skills/x/SKILL.md"
        ]
    else:
        path = tmp_path / "objects" / "users" / ALICE / "skills" / "x" / "SKILL.md"
        assert path.read_bytes() == b"layout"


def test_check_passes_on_a_usable_store(store: ObjectStore) -> None:
    store.check()


@pytest.mark.parametrize(
    "url",
    [
        "",
        "   ",
        "relative/objects",
        "~/objects",
        "gs://bucket/x",
        "http://example.com/objects",
        "s3://",
        "s3:///prefix",
        "s3://bucket/../escape",
        "s3://bucket/a//b",
        "s3://bucket/p?versioning=1",
        "s3://bu cket",
        "file://remote-host/objects",
        "file:relative",
    ],
)
def test_bad_urls(url: str) -> None:
    with pytest.raises(ValueError) as info:
        open_object_store(url)
    assert "\n" not in str(info.value)


def test_urls_and_descriptions(tmp_path: Path) -> None:
    assert open_object_store(str(tmp_path)).describe() == f"local:{tmp_path}"
    assert open_object_store(f"file://{tmp_path}/a%20b").describe() == f"local:{tmp_path}/a b"
    assert open_object_store("s3://bucket").describe() == "s3://bucket"
    described = open_object_store(
        "s3://bucket/some/prefix/", s3_endpoint_url="http://127.0.0.1:9", s3_region="auto"
    ).describe()
    assert described == "s3://bucket/some/prefix (endpoint http://127.0.0.1:9, region auto)"


def test_opening_an_s3_store_does_not_import_boto3() -> None:
    code = (
        "import sys\n"
        "from core.store.objects import open_object_store\n"
        "open_object_store('s3://bucket/prefix')\n"
        "assert 'boto3' not in sys.modules and 'botocore' not in sys.modules\n"
    )
    root = Path(__file__).resolve().parents[3]
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True, timeout=30)


def test_s3_list_walks_every_page(moto_s3: MotoS3, s3_bucket: str) -> None:
    store = S3ObjectStore(s3_bucket, endpoint_url=moto_s3.endpoint_url, list_page_size=2)
    keys = [f"many/{i}" for i in range(7)]
    for key in [*keys, "other"]:
        store.put(ALICE, key, b"")

    assert store.list(ALICE, "many/") == keys
    assert len(store.list(ALICE)) == 8


def test_s3_check_reports_a_missing_bucket(moto_s3: MotoS3, s3_bucket: str) -> None:
    store = open_object_store("s3://no-such-bucket-here", s3_endpoint_url=moto_s3.endpoint_url)
    with pytest.raises(ObjectStoreError, match="'no-such-bucket-here' does not exist"):
        store.check()
    with pytest.raises(ObjectStoreError, match="does not exist"):
        store.put(ALICE, "k", b"x")


def test_s3_check_reports_an_unreachable_endpoint(s3_bucket: str) -> None:
    from iris_testing.server import free_port

    endpoint = f"http://127.0.0.1:{free_port()}"
    store = open_object_store(f"s3://{s3_bucket}", s3_endpoint_url=endpoint)
    with pytest.raises(ObjectStoreError, match=endpoint.replace(".", r"\.")):
        store.check()


def test_s3_check_reports_missing_credentials(
    moto_s3: MotoS3, s3_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    store = open_object_store(f"s3://{s3_bucket}", s3_endpoint_url=moto_s3.endpoint_url)
    with pytest.raises(ObjectStoreError, match="no AWS credentials"):
        store.check()


def _race_in_process(root: str, etag: str, barrier, results, indexes: list[int]) -> None:
    store = open_object_store(root)

    def attempt(index: int) -> None:
        barrier.wait(timeout=20)
        try:
            store.put(ALICE, "counter", f"{index}".encode(), if_match=etag)
            results.put((index, "won"))
        except PreconditionFailed:
            results.put((index, "lost"))

    threads = [threading.Thread(target=attempt, args=(i,)) for i in indexes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_local_racing_writers_across_processes(tmp_path: Path) -> None:
    root = str(tmp_path / "objects")
    base = open_object_store(root).put(ALICE, "counter", b"base")
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(WRITERS)
    results = context.Queue()
    processes = [
        context.Process(
            target=_race_in_process, args=(root, base, barrier, results, list(range(p, WRITERS, 2)))
        )
        for p in range(2)
    ]
    for process in processes:
        process.start()
    outcomes = dict(results.get(timeout=30) for _ in range(WRITERS))
    for process in processes:
        process.join(timeout=30)

    winners = [index for index, outcome in outcomes.items() if outcome == "won"]
    assert len(outcomes) == WRITERS and len(winners) == 1
    assert open_object_store(root).get(ALICE, "counter").data == f"{winners[0]}".encode()


def test_local_symlinks_cannot_escape_a_user(tmp_path: Path) -> None:
    root = tmp_path / "objects"
    store = open_object_store(str(root))
    store.put(ALICE, "notes/secret", b"alice only")
    store.put(BOB, "mine", b"bob")
    (root / "users" / BOB / "alice").symlink_to(root / "users" / ALICE)
    (root / "users" / BOB / "stolen").symlink_to(root / "users" / ALICE / "notes" / "secret")

    for key in ("alice/notes/secret", "stolen"):
        with pytest.raises(ValueError, match="outside"):
            store.get(BOB, key)
        with pytest.raises(ValueError, match="outside"):
            store.put(BOB, key, b"overwrite")
    with pytest.raises(ValueError, match="outside"):
        store.delete(BOB, "alice/notes/secret")
    assert store.list(BOB) == ["mine"]
    assert store.list(BOB, "alice/") == []
    assert store.get(ALICE, "notes/secret").data == b"alice only"


def test_local_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    root = tmp_path / "objects"
    store = open_object_store(str(root))
    for i in range(5):
        store.put(ALICE, "skills/a/SKILL.md", f"{i}".encode())
    store.delete(ALICE, "skills/a/SKILL.md")
    store.put(ALICE, "kept", b"k")

    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert files == [f"locks/{ALICE}.lock", f"users/{ALICE}/kept"]
    assert not (root / "users" / ALICE / "skills").exists()


def test_local_key_and_prefix_cannot_collide(tmp_path: Path) -> None:
    store = open_object_store(str(tmp_path / "objects"))
    store.put(ALICE, "a", b"file")
    store.put(ALICE, "b/c", b"nested")

    with pytest.raises(ObjectStoreError, match="parents is itself a key"):
        store.put(ALICE, "a/b", b"x")
    with pytest.raises(ObjectStoreError, match="prefix of other keys"):
        store.put(ALICE, "b", b"x")
    assert store.head(ALICE, "b") is None
    assert store.list(ALICE) == ["a", "b/c"]


def test_local_check_reports_an_unusable_root(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"")
    with pytest.raises(ObjectStoreError, match="not usable"):
        open_object_store(str(blocker / "objects")).check()

"""A stand-in for the parts of ``modal`` that ``ModalDispatcher`` uses, with the real SDK's
parameter names and exception classes (``modal.exception`` itself); every call is bound to the
real signature as it is made, and recorded. ``fail_next`` queues exceptions the next spawns
raise; ``on_spawn`` runs what the spawned container would. ``Queue`` stands in for named
``modal.Queue`` objects (the answer relay's)."""

from __future__ import annotations

import asyncio
import pickle
import queue as stdlib_queue
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import modal
import modal.exception

from iris_testing.sandboxes.fake_common import Call as _Bound
from iris_testing.sandboxes.fake_common import bind


@dataclass
class Call:
    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)


def _checked(real: Any, call: Call) -> Call:
    bind(real, _Bound(call.name, call.args, call.kwargs))
    return call


class FakeModal:
    exception = modal.exception

    def __init__(self, on_spawn: Callable[..., Awaitable[None] | None] | None = None) -> None:
        self.calls: list[Call] = []
        self.failures: list[BaseException] = []
        self.on_spawn = on_spawn
        self.Cls = _ClsNamespace(self)
        self.Queue = _QueueNamespace(self)

    def fail_next(self, *errors: BaseException) -> None:
        self.failures.extend(errors)

    def spawned(self, method: str = "drain") -> list[tuple[Any, ...]]:
        return [c.args for c in self.calls if c.name == f"{method}.spawn.aio"]


class _ClsNamespace:
    def __init__(self, sdk: FakeModal) -> None:
        self._sdk = sdk

    def from_name(
        self, app_name: str, name: str, *, version: int | None = None,
        environment_name: str | None = None, client: Any = None,
    ) -> _Cls:
        kwargs = {k: v for k, v in (("version", version), ("environment_name", environment_name),
                                     ("client", client)) if v is not None}
        self._sdk.calls.append(
            _checked(modal.Cls.from_name, Call("Cls.from_name", (app_name, name), kwargs))
        )
        return _Cls(self._sdk, app_name, name)


class _Cls:
    def __init__(self, sdk: FakeModal, app_name: str, name: str) -> None:
        self._sdk, self.app_name, self.name = sdk, app_name, name

    def __call__(self) -> _Obj:
        return _Obj(self._sdk)


class _Obj:
    def __init__(self, sdk: FakeModal) -> None:
        self._sdk = sdk

    def __getattr__(self, method: str) -> _Method:
        return _Method(self._sdk, method)


class _Method:
    def __init__(self, sdk: FakeModal, method: str) -> None:
        self.method = method
        self.spawn = _Spawn(sdk, method)


class _Spawn:
    def __init__(self, sdk: FakeModal, method: str) -> None:
        self._sdk, self._method = sdk, method

    async def aio(self, *args: Any, **kwargs: Any) -> None:
        call = Call(f"{self._method}.spawn.aio", args, kwargs)
        # modal's generated stubs declare ``spawn`` as an instance attribute of the generic
        # Function, so reading it on the class is "ambiguous"; at runtime it is the method
        self._sdk.calls.append(_checked(modal.Function.spawn, call))  # type: ignore[misc]
        if self._sdk.failures:
            raise self._sdk.failures.pop(0)
        if self._sdk.on_spawn is not None:
            result = self._sdk.on_spawn(*args, **kwargs)
            if result is not None:
                await result


class _QueueNamespace:
    def __init__(self, sdk: FakeModal) -> None:
        self._sdk = sdk
        self._queues: dict[str, FakeQueue] = {}
        self._lock = threading.Lock()

    def from_name(
        self, name: str, *, environment_name: str | None = None,
        create_if_missing: bool = False, client: Any = None,
    ) -> FakeQueue:
        kwargs = {k: v for k, v in (("environment_name", environment_name),
                                     ("create_if_missing", create_if_missing),
                                     ("client", client)) if v not in (None, False)}
        self._sdk.calls.append(_checked(modal.Queue.from_name, Call("Queue.from_name", (name,),
                                                                    kwargs)))
        with self._lock:
            if name not in self._queues:
                if not create_if_missing:
                    raise modal.exception.NotFoundError(f"Queue {name!r} not found")
                self._queues[name] = FakeQueue(self._sdk, name)
            return self._queues[name]


class FakeQueue:
    """A named Queue's partitions, shared by every thread and event loop of the process (the
    web and worker containers of a test). ``put``/``put_many``/``get_many`` follow the real
    ``.aio`` methods: a partition key is non-empty and at most 64 bytes, items are copied as
    the real Queue pickles them, and a blocking ``get_many`` that times out raises the stdlib's
    ``queue.Empty``. ``drop_puts`` makes puts vanish (a relay that never delivers)."""

    def __init__(self, sdk: FakeModal, name: str) -> None:
        self._sdk, self.name = sdk, name
        self._partitions: dict[str, list[Any]] = {}
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self.drop_puts = False
        self.put = _Aio(self._put)
        self.put_many = _Aio(self._put_many)
        self.get_many = _Aio(self._get_many)

    def items(self, partition: str) -> list[Any]:
        with self._lock:
            return list(self._partitions.get(partition, []))

    @staticmethod
    def _key(partition: str | None) -> str:
        key = partition or ""
        if partition is not None and not 0 < len(key.encode()) <= 64:
            raise modal.exception.InvalidError("Queue partition key must be 1–64 bytes long")
        return key

    async def _put(self, v: Any, block: bool = True, timeout: float | None = None, *,
                   partition: str | None = None, partition_ttl: int = 86400) -> None:
        await self._put_many([v], block, timeout, partition=partition,
                             partition_ttl=partition_ttl, _name="put.aio")

    async def _put_many(self, vs: list[Any], block: bool = True, timeout: float | None = None,
                        *, partition: str | None = None, partition_ttl: int = 86400,
                        _name: str = "put_many.aio") -> None:
        real = modal.Queue.put if _name == "put.aio" else modal.Queue.put_many
        first = vs[0] if _name == "put.aio" else vs
        self._sdk.calls.append(_checked(real, Call(
            f"Queue.{_name}", (first, block, timeout),
            {"partition": partition, "partition_ttl": partition_ttl})))
        key = self._key(partition)
        if self.drop_puts:
            return
        with self._lock:
            self._partitions.setdefault(key, []).extend(pickle.loads(pickle.dumps(vs)))
            waiters, self._waiters = self._waiters, []
        for loop, event in waiters:
            loop.call_soon_threadsafe(event.set)

    async def _get_many(self, n_values: int, block: bool = True, timeout: float | None = None,
                        *, partition: str | None = None) -> list[Any]:
        self._sdk.calls.append(_checked(modal.Queue.get_many, Call(
            "Queue.get_many.aio", (n_values, block, timeout), {"partition": partition})))
        key = self._key(partition)
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            event = asyncio.Event()
            with self._lock:
                items = self._partitions.get(key, [])
                if items or not block:
                    taken, self._partitions[key] = items[:n_values], items[n_values:]
                    return taken
                self._waiters.append((loop, event))
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                raise stdlib_queue.Empty()
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except TimeoutError:
                raise stdlib_queue.Empty() from None


class _Aio:
    """A method offered, as the real SDK's are, as ``.aio``."""

    def __init__(self, aio: Callable[..., Awaitable[Any]]) -> None:
        self.aio = aio

"""A stand-in for the parts of ``modal`` that ``ModalDispatcher`` uses, with the real SDK's
parameter names and exception classes (``modal.exception`` itself); every call is bound to the
real signature as it is made, and recorded. ``fail_next`` queues exceptions the next spawns
raise; ``on_spawn`` runs what the spawned container would."""

from __future__ import annotations

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
        self._sdk.calls.append(_checked(modal.Function.spawn, call))
        if self._sdk.failures:
            raise self._sdk.failures.pop(0)
        if self._sdk.on_spawn is not None:
            result = self._sdk.on_spawn(*args, **kwargs)
            if result is not None:
                await result

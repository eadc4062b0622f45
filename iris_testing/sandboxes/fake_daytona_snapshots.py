"""The fake Daytona SDK's snapshot service (``Daytona.snapshot``, the SDK's SnapshotService,
``daytona._sync.snapshot``): calls are recorded and bound to the installed SDK's signatures by
the owning ``FakeDaytona``; a build reads the SDK's own ``Image`` Dockerfile."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from daytona.common import errors

if TYPE_CHECKING:
    from iris_testing.sandboxes.fake_daytona import FakeDaytona


@dataclass
class SnapshotRecord:
    """A snapshot as Daytona keeps it: its name, state and the Dockerfile it was built from."""

    name: str
    state: str
    dockerfile: str
    error_reason: str | None = None


class FakeSnapshots:
    """``Daytona.snapshot`` (the SDK's SnapshotService): ``get`` raises DaytonaNotFoundError
    for an unknown name; ``create`` builds from the declarative image, streaming build lines
    to ``on_logs``, and ends ``active`` (or raises, ending ``build_failed``)."""

    def __init__(self, fake: FakeDaytona) -> None:
        self._fake = fake

    def get(self, name: str) -> SnapshotRecord:
        self._fake.recorder.record("SnapshotService.get", name)
        found = self._fake.snapshots.get(name)
        if found is None:
            raise errors.DaytonaNotFoundError(f"Snapshot {name} not found", status_code=404,
                                              source=errors.SOURCE_API)
        return found

    def create(self, params: Any, *, on_logs: Any = None, timeout: float | None = 0) -> Any:
        self._fake.recorder.record("SnapshotService.create", params, on_logs=on_logs,
                                   timeout=timeout)
        if params.name in self._fake.snapshots:
            raise errors.DaytonaError(f"Snapshot with name {params.name} already exists",
                                      status_code=409)
        dockerfile = params.image.dockerfile()
        record = SnapshotRecord(params.name, "building", dockerfile)
        self._fake.snapshots[params.name] = record
        for line in dockerfile.splitlines():
            if on_logs is not None:
                on_logs(f"Step: {line}")
        if self._fake.snapshot_build_fails:
            record.state, record.error_reason = "build_failed", "apt-get install failed"
            raise errors.DaytonaError(
                f"Failed to create snapshot {params.name}: build_failed, error reason: "
                f"{record.error_reason}"
            )
        record.state = "active"
        return record

"""Stand-ins for the Modal and Daytona SDKs, backed by real directories and real subprocesses.

Each fake offers only the attributes the adapters use, binds every call to the real SDK's
signature as it is made, raises the real SDKs' exception classes, and records every call
(name, args, kwargs) so tests can check call sequences and inject faults.
"""

from iris_testing.sandboxes.fake_common import Call, Container, MemoryStateStore, Recorder
from iris_testing.sandboxes.fake_daytona import FakeDaytona
from iris_testing.sandboxes.fake_modal import FakeModal

__all__ = ["Call", "Container", "FakeDaytona", "FakeModal", "MemoryStateStore", "Recorder"]

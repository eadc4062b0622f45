"""The Modal fake moved to ``iris_testing/modal_fake.py`` (shared with bench/)."""

from iris_testing.modal_fake import Call, FakeModal

__all__ = ["Call", "FakeModal"]

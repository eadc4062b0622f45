"""The tool tests' fixtures: a tool context for one user, and that user's workspace."""

from tests.core.tools.conftest import ctx, workspace  # noqa: F401

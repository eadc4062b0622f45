"""A tool context for one user, and that user's local workspace directory."""

import pytest

from tests.core.acting.support import make_ctx


@pytest.fixture
def ctx(store, settings):
    return make_ctx(store, settings)


@pytest.fixture
def workspace(ctx, iris_home):
    path = iris_home / "workspaces" / ctx.user_id
    path.mkdir(parents=True, exist_ok=True)
    return path

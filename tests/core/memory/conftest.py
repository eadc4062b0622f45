import pytest

from core.memory.book import Limits


@pytest.fixture
def limits():
    return Limits(memory=2_200, user=1_375)


@pytest.fixture
def alice(store):
    return store.users.for_account("http:alice")


@pytest.fixture
def bob(store):
    return store.users.for_account("http:bob")

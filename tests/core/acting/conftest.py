import pytest

from core.acting.mcp_tools import forget_tools


@pytest.fixture(autouse=True)
def fresh_mcp_tool_lists():
    forget_tools()
    yield
    forget_tools()

"""A small MCP server over stdio for the tests: it reports what it sees of its environment."""

import os
import sys

print("stdio test server starting", file=sys.stderr, flush=True)
if os.environ.get("FAIL_AT_START"):
    print(f"fatal: {os.environ['FAIL_AT_START']}", file=sys.stderr, flush=True)
    sys.exit(2)

from mcp.server.mcpserver import MCPServer  # noqa: E402

server = MCPServer("iris-test-stdio")


@server.tool()
def getenv(name: str) -> str:
    """The value of an environment variable, or '<unset>'."""
    return os.environ.get(name, "<unset>")


@server.tool()
def die() -> str:
    """Exit the server process in the middle of the call."""
    os._exit(1)


if __name__ == "__main__":
    server.run()

"""A stdio MCP server for the tests that notes each start in the file named by START_LOG."""

import os
from pathlib import Path

with Path(os.environ["START_LOG"]).open("a") as log:
    log.write("start\n")

from mcp.server.mcpserver import MCPServer

server = MCPServer("iris-counting")


@server.tool()
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


if __name__ == "__main__":
    server.run()

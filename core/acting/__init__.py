"""Acting in the world: per-user sandboxes behind the terminal and file tools, commands held for
the user's approval, MCP tools and subagents.

Importing this package is cheap; the sandbox SDKs and ``mcp`` load only when used.
"""

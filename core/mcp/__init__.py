"""MCP client: tools of the servers listed under ``mcp_servers:`` in iris.yaml.

Import ``core.config.mcp`` for settings and ``core.mcp.client`` for connections; this package
module imports neither, so importing it stays free.
"""

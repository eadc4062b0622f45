"""Settings of the MCP servers listed under ``mcp_servers:`` in iris.yaml.

Cheap to import: pydantic only, no ``mcp``.

```yaml
mcp_servers:
  time:
    command: mcp-server-time
    args: ["--local-timezone", "Europe/Berlin"]
  docs:
    url: https://mcp.example.com/mcp
    headers: {Authorization: "Bearer ..."}
    call_timeout: 30
```
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

SERVER_NAME = re.compile(r"[A-Za-z0-9_-]+")


class McpServerConfig(BaseModel):
    """One MCP server: a command run over stdio, or a streamable-HTTP ``url``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    connect_timeout: float = Field(default=10.0, gt=0)
    call_timeout: float = Field(default=60.0, gt=0)
    enabled: bool = True

    @field_validator("command", "url")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https://, got {value!r}")
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if self.command and self.url:
            raise ValueError(
                "set either 'command' (a server run over stdio) or 'url' (streamable HTTP), "
                "not both"
            )
        if not self.command and not self.url:
            raise ValueError(
                "set 'command' (a server run over stdio) or 'url' (streamable HTTP); neither is set"
            )
        if self.url and (self.args or self.env or self.cwd):
            raise ValueError("'args', 'env' and 'cwd' apply to stdio servers, not to a 'url'")
        if self.command and self.headers:
            raise ValueError("'headers' apply to a 'url' server, not to a stdio 'command'")
        return self

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "http"


def parse_mcp_servers(raw: Any) -> dict[str, McpServerConfig]:
    """Validate the ``mcp_servers`` mapping of iris.yaml.

    Raises ValueError naming the server and the field, e.g.
    ``mcp_servers.time.call_timeout: Input should be greater than 0``.
    """
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ValueError(
            f"mcp_servers: expected a mapping of server name to settings, got {type(raw).__name__}"
        )
    servers: dict[str, McpServerConfig] = {}
    for name, settings in raw.items():
        if not isinstance(name, str) or not SERVER_NAME.fullmatch(name):
            raise ValueError(
                f"mcp_servers: server name {name!r} may only use letters, digits, '_' and '-'"
            )
        if not isinstance(settings, Mapping):
            raise ValueError(
                f"mcp_servers.{name}: expected a mapping with 'command' or 'url', "
                f"got {type(settings).__name__}"
            )
        try:
            servers[name] = McpServerConfig.model_validate(dict(settings))
        except ValidationError as exc:
            raise ValueError(_describe(name, exc)) from None
    return servers


def _describe(name: str, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        location = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown setting"
        problems.append(f"mcp_servers.{name}{'.' + location if location else ''}: {message}")
    return "; ".join(problems)

"""The tool registry: one LLM-facing tool per module in this package."""

from __future__ import annotations

from core.tools.base import Tool, ToolContext, Toolset


def default_tools() -> list[Tool]:
    from core.tools.clock import Clock
    from core.tools.session_info import SessionInfo

    return [Clock(), SessionInfo()]


def default_toolset() -> Toolset:
    return Toolset(default_tools())


__all__ = ["Tool", "ToolContext", "Toolset", "default_tools", "default_toolset"]

"""The tool registry: one LLM-facing tool per module in this package, found by discovery.

A module ``core/tools/<name>.py`` defines one concrete ``Tool`` subclass whose constructor takes
no arguments; ``default_tools()`` instantiates each. Tools built at run time (MCP tools, tools
with per-turn configuration) are added to a turn's ``Toolset`` by their owners instead.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from core.contracts.toolkit import Tool, ToolContext, Toolset

SKIP = {"base", "catalogue"}  # the load_tools catalogue: no tool of its own


def default_tools() -> list[Tool]:
    tools: list[Tool] = []
    for name in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        if name.startswith("_") or name in SKIP:
            continue
        module = importlib.import_module(f"{__name__}.{name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(cls, Tool)
                and cls.__module__ == module.__name__
                and not inspect.isabstract(cls)
                and getattr(cls, "discoverable", True)
            ):
                tools.append(cls())
    return tools


def default_toolset() -> Toolset:
    return Toolset(default_tools())


__all__ = ["Tool", "ToolContext", "Toolset", "default_tools", "default_toolset"]

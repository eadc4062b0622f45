"""CLI command modules. Every module here exposes ``commands: list[click.Command]``; the ``iris``
group adds them all (one module per noun: ``memory.py`` for ``iris memory …``)."""

from __future__ import annotations

import importlib
import pkgutil

import click


def discover() -> list[click.Command]:
    found: list[click.Command] = []
    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        if module.startswith("_"):
            continue
        found.extend(importlib.import_module(f"{__name__}.{module}").commands)
    return found

"""Guards for text that reaches the model: scan stored text, check commands, wrap outside data."""

from core.security.commands import (
    DEFAULT_DANGEROUS_PATTERNS,
    DangerousPattern,
    check_command,
    compile_patterns,
)
from core.security.findings import Finding
from core.security.scanner import describe, scan_script, scan_text
from core.security.untrusted import wrap_untrusted

__all__ = [
    "DEFAULT_DANGEROUS_PATTERNS",
    "DangerousPattern",
    "Finding",
    "check_command",
    "compile_patterns",
    "describe",
    "scan_script",
    "scan_text",
    "wrap_untrusted",
]

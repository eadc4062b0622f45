"""SMS segment arithmetic (3GPP TS 23.038, as Twilio documents it): a text made only of GSM-7
characters travels 160 characters to a single segment and 153 to each segment of a
concatenated message (the basic set's escape-table characters ``^{}\\[~]|€`` count two); any
other character makes the whole message UCS-2: 70 UTF-16 units alone, 67 per segment when
concatenated."""

from __future__ import annotations

GSM_BASIC = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
GSM_EXTENDED = frozenset("^{}\\[~]|€\f")


def is_gsm(text: str) -> bool:
    return all(ch in GSM_BASIC or ch in GSM_EXTENDED for ch in text)


def units(text: str) -> tuple[bool, int]:
    """(GSM-7?, the message's length in septets or UTF-16 units)."""
    if is_gsm(text):
        return True, sum(2 if ch in GSM_EXTENDED else 1 for ch in text)
    return False, len(text.encode("utf-16-le")) // 2


def segments(text: str) -> int:
    """How many segments ``text`` takes as one (possibly concatenated) SMS."""
    gsm, size = units(text)
    single, multi = (160, 153) if gsm else (70, 67)
    if size <= single:
        return 1
    return -(-size // multi)

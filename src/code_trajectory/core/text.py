"""Small text formatting shared by every feature: sizes, times, durations."""

from __future__ import annotations


def format_size(size: int) -> str:
    """Human-readable size in binary units (``12.3 MiB``)."""
    value = float(size)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"

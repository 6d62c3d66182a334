"""Redaction time of 1 MB texts (the issue's goal: any content in <= 100 ms; RE2 keeps it linear).

Texts: random printable characters, ``a-a-a…``, ``password=`` repeated, short assignments and AWS key IDs repeated
(many matches), secrets just past the join gap apart (one replacement each: the most), non-ASCII text.
Prints the median of ``--runs`` per text, milliseconds, and the first compile. Usage: ``python bench/redaction.py``.
"""

from __future__ import annotations

import argparse
import random
import string
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from code_trajectory.core.secrets import JOIN_GAP, redact

SIZE = 1 << 20


def texts() -> dict[str, str]:
    rnd = random.Random(7)
    fill = lambda unit: (unit * (SIZE // len(unit) + 1))[:SIZE]
    return {
        "random printable": "".join(rnd.choice(string.printable) for _ in range(SIZE)),
        "a-a-a…": fill("a-"),
        "password= repeated": fill("password="),
        "password=x  repeated": fill("password=x "),
        f"pwd=abc, {JOIN_GAP + 1} chars apart": fill("pwd=abc " + "x" * (JOIN_GAP + 1) + " "),
        f"AWS key IDs, {JOIN_GAP + 1} apart": fill("AKIA" + "A" * 16 + " " + "y" * (JOIN_GAP + 1) + " "),
        "AWS key IDs": fill("AKIA" + "A" * 16 + " "),
        "ghp_ tokens": fill("ghp_" + "a" * 36 + " "),
        "non-ASCII": fill("é€😀 "),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    started = time.perf_counter()
    redact("warm up: password=x")
    print(f"first call (import re2, compile): {(time.perf_counter() - started) * 1000:.1f} ms")
    worst = 0.0
    for name, text in texts().items():
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            redact(text)
            times.append((time.perf_counter() - started) * 1000)
        median = sorted(times)[len(times) // 2]
        worst = max(worst, median)
        print(f"{name:28s} {median:7.1f} ms")
    print(f"worst median: {worst:.1f} ms (goal <= 100 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

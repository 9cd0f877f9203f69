"""The ``null`` reference agent: does nothing and leaves nothing (the floor of every rate)."""

from __future__ import annotations

import sys


def main() -> int:
    """Do nothing."""
    sys.stdout.write("null agent: nothing done\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``python -m reprobridge`` runs the ``reprobridge`` command line.

The distribution is named ``reprobridge``; its importable library is :mod:`reprobridge_sdk`.
This package exists only so that ``python -m reprobridge`` works like the console script; it
exports nothing.
"""

__all__: list[str] = []

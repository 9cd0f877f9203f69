"""Interoperability: exports of an artifact into other formats (CITATION.cff).

Each export reads the typed manifest and writes one file atomically; it never changes the
artifact.
"""

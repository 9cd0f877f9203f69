"""Measurement extraction: regex, JSON, CSV and YAML extractors and their line scanner."""

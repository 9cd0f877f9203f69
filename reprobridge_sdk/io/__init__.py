"""Reading and writing documents: YAML with positions, round-trip edits, atomic files."""

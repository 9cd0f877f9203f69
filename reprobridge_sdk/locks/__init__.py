"""Lock files: pip hashed requirements and PEP 751 pylock.toml."""

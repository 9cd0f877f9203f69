"""The author's path: scaffolding an artifact and, later, codebase import, packing and checks."""

"""The simplest strong peer of bulk schema validation: jsonschema-rs over YAML manifests.

Run: ``python benchmarks/peer_jsonschema_rs.py SCHEMA MANIFEST...``. Each manifest is read
with PyYAML (its C loader when built) and validated against SCHEMA with one compiled
``jsonschema_rs`` validator; the exit status is 1 when any manifest is invalid, 2 when
``jsonschema_rs`` is not installed. Schema only, like ``check-jsonschema``: no positions, no
files, digests, lock or replay. ``bench_validate.py`` runs it as a whole process.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml


def main(argv: list[str]) -> int:
    try:
        import jsonschema_rs
    except ImportError:
        sys.stderr.write("jsonschema_rs is not installed (pip install jsonschema-rs)\n")
        return 2
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    schema = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    validator = jsonschema_rs.validator_for(schema)
    invalid = 0
    for name in argv[1:]:
        with Path(name).open(encoding="utf-8") as stream:
            document = yaml.load(stream, Loader=loader)
        if not validator.is_valid(document):
            invalid += 1
            sys.stderr.write(f"{name}: invalid\n")
    return 1 if invalid else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

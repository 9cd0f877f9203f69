"""The experiment of the audit cases: prints its accuracy, writes its F1."""
import json
import sys
from pathlib import Path

args = sys.argv[1:]
seed = int(args[args.index("--seed") + 1])
out = Path(args[args.index("--out") + 1])
acc = 90.0 + (seed % 3) * 0.1
print(f"seed {seed}")
print(f"test accuracy: {acc:.4f}")
out.parent.mkdir(parents=True, exist_ok=True)
out.write_text(json.dumps({"test": {"f1": round(acc - 1.0, 4)}}))

"""A toy experiment: accuracy depends on the seed and the number of epochs only."""
import json
import sys
from pathlib import Path

args = sys.argv[1:]
seed = int(args[args.index("--seed") + 1])
epochs = int(args[args.index("--epochs") + 1])
out = Path(args[args.index("--out") + 1]) if "--out" in args else Path("results/metrics.json")
acc = 90.0 + (seed % 3) * 0.1 - (0.0 if epochs >= 10 else 5.0)
for epoch in range(epochs):
    print(f"epoch {epoch} loss {1.0 / (epoch + 1):.4f}")
print(f"test accuracy: {acc:.4f}")
out.parent.mkdir(parents=True, exist_ok=True)
out.write_text(json.dumps({"test": {"f1": round(acc - 1.0, 4)}}))

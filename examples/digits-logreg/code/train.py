"""Digits study: L2 logistic regression against a 1-nearest-neighbour baseline.

One run trains and evaluates both models on one stratified 75/25 split of scikit-learn's
bundled 8x8 digits data (1,797 images, 10 classes). The split seed is the only source of
randomness, so a run is deterministic for a given seed and library versions.

Usage:
    python train.py --seed SEED --out METRICS_JSON [--subset N]

Progress lines start with ``[digits]`` so that a runner can track them as landmarks; the
final lines print each metric as ``<name>=<value>``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

TEST_SIZE = 0.25
C = 1.0


def _log(message: str) -> None:
    print(f"[digits] {message}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True, help="split seed")
    parser.add_argument("--out", required=True, help="where to write the metrics JSON")
    parser.add_argument(
        "--subset", type=int, default=None, help="use only the first N images (smoke runs)"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()

    X, y = load_digits(return_X_y=True)
    if args.subset is not None:
        X, y = X[: args.subset], y[: args.subset]
    _log(f"loaded digits: {X.shape[0]} images, {X.shape[1]} features, seed={args.seed}")

    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=TEST_SIZE, random_state=args.seed, stratify=y
    )
    _log(f"split: {len(y_train)} train, {len(y_test)} test (stratified)")

    # The scaler is part of each pipeline, so it is fitted on the training split only.
    logreg = make_pipeline(StandardScaler(), LogisticRegression(C=C, random_state=args.seed))
    logreg.fit(X_train, y_train)
    n_iter = int(logreg[-1].n_iter_.max())
    _log(f"fitted logistic regression: {n_iter} lbfgs iterations")
    pred = logreg.predict(X_test)

    knn = make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=1))
    knn.fit(X_train, y_train)
    _log("fitted 1-nearest-neighbour baseline")
    knn_pred = knn.predict(X_test)

    metrics = {
        "seed": args.seed,
        "n_train": len(y_train),
        "n_test": len(y_test),
        "logreg": {
            "accuracy": float(accuracy_score(y_test, pred)),
            "macro_f1": float(f1_score(y_test, pred, average="macro")),
            "iterations": n_iter,
        },
        "knn": {"accuracy": float(accuracy_score(y_test, knn_pred))},
        "elapsed_seconds": time.perf_counter() - started,
    }
    out_dir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(out_dir, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(metrics, handle, indent=2)
        handle.write("\n")
    _log(f"wrote {args.out}")
    print(f"logreg_accuracy={metrics['logreg']['accuracy']:.6f}")
    print(f"logreg_macro_f1={metrics['logreg']['macro_f1']:.6f}")
    print(f"knn_accuracy={metrics['knn']['accuracy']:.6f}")
    _log(f"done in {metrics['elapsed_seconds']:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

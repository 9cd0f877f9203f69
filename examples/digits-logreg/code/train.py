"""Digits study: L2 logistic regression against a 1-nearest-neighbour baseline.

Usage: python train.py SEED
"""

import json
import sys

from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

seed = int(sys.argv[1])

X, y = load_digits(return_X_y=True)
X = StandardScaler().fit_transform(X)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=seed)

logreg = LogisticRegression(C=1.0, multi_class="multinomial", random_state=seed)
logreg.fit(X_train, y_train)
pred = logreg.predict(X_test)

knn = KNeighborsClassifier(n_neighbors=1)
knn.fit(X_train, y_train)

results = {
    "seed": seed,
    "logreg_accuracy": accuracy_score(y_test, pred),
    "logreg_macro_f1": f1_score(y_test, pred, average="macro"),
    "knn_accuracy": accuracy_score(y_test, knn.predict(X_test)),
}
print(results)
with open("results/metrics.json", "w") as f:
    json.dump(results, f)

"""``reprobridge bench``: does an artifact help a reproducing agent (spec bench.md; preview).

:mod:`.variants` writes the workspaces an agent is given, :mod:`.harness` runs the agents,
:mod:`.judge` judges what they leave (never believing it) and :mod:`.report` sums it up. A
layer above the build agent: nothing of the SDK imports it but the command line.
"""

from __future__ import annotations

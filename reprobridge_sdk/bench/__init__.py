"""``reprobridge bench``: does an artifact help a reproducing agent (spec ``bench``; preview).

:mod:`.variants` writes the workspaces an agent is given (raw, refined, masked, expert), each
with its record; :mod:`.judge` judges the results file an agent leaves, never believing it:
values are re-extracted from the agent's logs with the artifact's extractors and judged
against the artifact's compatibility intervals.

This package is a layer of its own, above the build agent: it may import the audit, the
extraction and the model; nothing of the SDK imports it but the command line.
"""

from __future__ import annotations

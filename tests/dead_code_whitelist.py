"""Names the dead-code check (``tests/test_dead_code.py``, vulture) would report but that are
used from outside the package's own code: public API methods, hooks that a library calls by
name. Each is a real reference, so the check's test fails on an entry that no longer exists.
Decorated pydantic validators, click commands and module ``__getattr__``/``__dir__`` are
skipped by the test's ``ignore_*`` lists instead."""

# ruff: noqa: B018 - the bare attribute references are the whitelist

from reprobridge_sdk.agent.sdists import _Links
from reprobridge_sdk.api import ArtifactDir
from reprobridge_sdk.authoring._tarsafe import _FixedPaxInfo
from reprobridge_sdk.cli import _LazyGroup
from reprobridge_sdk.env._download import _HTTPHandler, _HTTPSHandler
from reprobridge_sdk.io._yamlcore import _Loader
from reprobridge_sdk.model import SpecModel
from reprobridge_sdk.validation._engine import CompiledSchema

# Public API (README, tests/api).
ArtifactDir.add_task
ArtifactDir.add_launcher
SpecModel.extensions
CompiledSchema.is_valid

# Hooks a library calls by name.
_FixedPaxInfo._proc_pax  # tarfile's extended-header hook
_LazyGroup.get_command  # click.Group
_LazyGroup.format_commands  # click.Group
_HTTPHandler.http_open  # urllib.request's protocol handlers
_HTTPSHandler.https_open
_Links.handle_starttag  # html.parser.HTMLParser's hook
_Loader.descend_resolver  # PyYAML's resolver hooks
_Loader.ascend_resolver

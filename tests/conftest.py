"""Shared test configuration.

Every test runs with its own SDK cache directory (``REPROBRIDGE_CACHE_DIR``), so no test reads
or writes the user's cache and no test sees another's environments or digests. Session-scoped
fixtures (built once, before any test's own fixtures) get a cache of the session's.

No test sees the user's settings either: the ``REPROBRIDGE_*`` variables of the settings
(``REPROBRIDGE_STRICT=1`` or ``REPROBRIDGE_REPORT_FORMAT=json`` in a shell failed 27 tests of
``validate``'s command line alone), the signing key, ``NO_COLOR`` and ``FORCE_COLOR`` are
removed for the session (a test that needs one sets it), and ``XDG_CONFIG_HOME`` names an
empty directory, so the user's configuration file is not read. A configuration file above the
temporary directory, which every command run there would read, stops the session with its
path. Variables that steer the tests themselves (``REPROBRIDGE_INDEX_URL``,
``REPROBRIDGE_REQUIRE_SANDBOX``, ``HYPOTHESIS_PROFILE``) are kept.

Tests that make a repository commit as a test author (``GIT_AUTHOR_*``, ``GIT_COMMITTER_*``),
so they pass on a machine where git knows no user, as on a fresh CI runner.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import code_census
import pytest
from hypothesis import HealthCheck, is_hypothesis_test, settings

from reprobridge_sdk import config

# Property tests: a quick profile by default; CI (HYPOTHESIS_PROFILE=ci) runs more examples
# from a derandomised seed, so a failure there is reproducible and never "at random". Tests
# that pin max_examples in their own @settings keep their number under both profiles.
# Neither profile times an example (no deadline) nor fails a test whose data is slow to
# generate (too_slow): both are timings of the machine, which a loaded one misses at random;
# tests assert values, and a hang is caught by each test's own guard. A test that names its
# own suppress_health_check list names too_slow in it for the same reason.
settings.register_profile(
    "dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# The range runs of CI (other CPython versions, the dependency floors and ceilings) check
# compatibility, not depth: the quick profile's number of examples, derandomised as in CI.
settings.register_profile(
    "ci-range",
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "ci",
    max_examples=400,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

REPO = Path(__file__).resolve().parent.parent

#: The user's settings that change what commands do (every settings key but the cache, which
#: the fixtures below set), the signing key, and the colour switches.
USER_SETTINGS = (
    *(config._env_name(key) for key in config._KEYS if key != "cache-dir"),
    "REPROBRIDGE_SIGNING_KEY",
    "NO_COLOR",
    "FORCE_COLOR",
)
CENSUS_TEST = "test_codes_produced.py::test_every_registered_code_is_produced"

code_census.install()


@pytest.fixture
def repo_root() -> Path:
    """The repository root (for the committed schemas, the conformance suite and examples)."""
    return REPO


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The SDK cache of session-scoped fixtures (never the user's ``~/.cache/reprobridge``),
    and none of the user's settings (see the module's docstring)."""
    cache = tmp_path_factory.mktemp("session-cache")
    found = config.find_config(cache, environ={"XDG_CONFIG_HOME": str(cache)})  # files only
    if found is not None:
        pytest.exit(
            f"{found} would be read by every command the tests run below {cache.parent}: "
            "move it away, or give pytest another --basetemp",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )
    with pytest.MonkeyPatch.context() as patch:
        for name in USER_SETTINGS:
            patch.delenv(name, raising=False)
        patch.setenv("REPROBRIDGE_CACHE_DIR", str(cache))
        for role in ("AUTHOR", "COMMITTER"):
            patch.setenv(f"GIT_{role}_NAME", os.environ.get(f"GIT_{role}_NAME", "Test Author"))
            patch.setenv(
                f"GIT_{role}_EMAIL", os.environ.get(f"GIT_{role}_EMAIL", "test@example.org")
            )
        # the user's own configuration file (~/.config/reprobridge) is not read either
        patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))
        yield cache


@pytest.fixture(autouse=True)
def _private_cache(
    _session_cache: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Each test's own SDK cache directory (subprocesses inherit it through the environment)."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(cache))
    return cache


@pytest.fixture(scope="session")
def env_cache(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Iterator[Path]:
    """One environment cache for the session's builds of the build agent's fixtures: every
    fixture locks the same versions, so the first build makes the environment and every other
    build, in any directory of the suite, reuses it. A test passes it as
    ``REPROBRIDGE_CACHE_DIR`` while its build runs.

    It is the whole session's, not one pytest-xdist worker's: it lies in the session's shared
    temporary directory (as ``example_runs`` does), so an environment one worker built is
    not built again by the other. The SDK builds each environment under a file lock of its
    key, as it does for any two commands that share a user's cache.

    The download caches of uv and pip are shared too (the clean-room check keeps them: its
    environment is still built fresh, from wheels already downloaded).

    That fresh environment still compiles its bytecode (``uv pip sync --compile-bytecode``,
    about 14 CPU seconds for numpy, scipy, scikit-learn and matplotlib), and the tests keep
    it so: the check's launchers run in the sandbox, where the environment is read-only, so
    without it every run would compile what it imports again (about 3.5 CPU seconds more a run of
    the fixtures' scripts). Skipping it would change nothing the check proves, but would
    save little for a check of one smoke and one scored run and cost more for more runs.
    """
    base = tmp_path_factory.getbasetemp()
    cache = (base if worker_id == "master" else base.parent) / "reprobridge-cache"
    cache.mkdir(exist_ok=True)
    patch = pytest.MonkeyPatch()
    for name in ("UV_CACHE_DIR", "PIP_CACHE_DIR"):
        if name not in os.environ:
            patch.setenv(name, str(cache / name.lower()))
    yield cache
    patch.undo()


# ------------------------------------------------------------------ the census of finding codes


def pytest_configure(config: pytest.Config) -> None:
    """The census covers the whole suite only when pytest was pointed at all of ``tests/``."""
    targets = {
        (Path(config.invocation_params.dir) / arg.split("::")[0]).resolve() for arg in config.args
    }
    if not targets <= {code_census.TESTS, REPO}:
        code_census.INCOMPLETE.append("only part of the suite was collected")
    if config.getoption("ignore", None) or config.getoption("ignore_glob", None):
        code_census.INCOMPLETE.append("part of the suite was ignored (--ignore)")


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        code_census.INCOMPLETE.append(f"{len(items)} tests were deselected")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The census test runs after every other test."""
    census = [item for item in items if item.nodeid.endswith(CENSUS_TEST)]
    for item in census:
        items.remove(item)
        items.append(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Name the running test for the census (property tests are not counted), and point the
    subprocesses it starts at its census file (``code_census.begin``)."""
    function = getattr(item, "obj", None)
    counted = function is not None and not is_hypothesis_test(function)
    code_census.begin(item.nodeid if counted else None)
    try:
        return (yield)
    finally:
        code_census.end()


def pytest_unconfigure(config: pytest.Config) -> None:
    code_census.cleanup()


# Under pytest-xdist (``-n``), each worker hands its census to the controller, which checks the
# whole suite's census once every worker is done: no single worker sees every test.


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A worker hands its census to the controller; the controller gives the verdict."""
    config = session.config
    worker_output = getattr(config, "workeroutput", None)
    if worker_output is not None:
        worker_output["code_census"] = code_census.export()
    elif getattr(config.option, "numprocesses", None) and not session.shouldstop:
        _census_verdict(session)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` (the configuration's), the longest files first and the build agent's
    end-to-end file split by fixture (``suite_schedule``); any other ``--dist`` is xdist's own."""
    if config.getvalue("dist") != "loadfile":
        return None
    from suite_schedule import HeaviestFirst  # the controller only

    return HeaviestFirst(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """A worker is done: merge its census (a worker that crashed leaves the census incomplete)."""
    exported = getattr(node, "workeroutput", {}).get("code_census")
    if error or exported is None:
        code_census.INCOMPLETE.append(f"a worker ended without its census ({error})")
        return
    code_census.merge(exported)


def _census_verdict(session: pytest.Session) -> None:
    """``test_every_registered_code_is_produced``, for the whole suite run by xdist workers."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    reporter.ensure_newline()
    reason = code_census.complete()
    if reason is not None:
        reporter.write_line(f"census of finding codes skipped: it needs the whole suite: {reason}")
        return
    missing = code_census.missing(code_census.emitted(), code_census.PRODUCED)
    if missing:
        reporter.write_sep("=", "census of finding codes FAILED", red=True, bold=True)
        reporter.write_line(f"codes the package emits that no test produces: {missing}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    else:
        reporter.write_line("census of finding codes: every code the package emits is produced")

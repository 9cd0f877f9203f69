"""Replay's plain reading of a run (``run/recorded.py``) means what the typed reading means.

``extract --run`` reads six fields of the record and the launcher's measurements as plain
data and loads the models only for data of another shape; ``extract --log`` reads the
launcher's measurements, seeds and params the same way. Laws, over a real recorded run whose
record and manifest hypothesis mutates (valid variations and hostile values: wrong types,
strings for numbers, booleans, nested junk, links out of the run folder):

* whenever the typed reading (``load_record``, the typed manifest, ``measure``: what replay
  did before) gives values, the plain replay gives the same values, of a run and of its log;
* whenever the typed reading refuses, the plain replay refuses with an SDK error too, or
  replays a part it reads (a record or manifest broken only where replay does not read);
* the plain replay never raises anything but an SDK error;
* a record of the plain shape is read without the models (checked in a bare process).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.model import MeasuredValue
from reprobridge_sdk.run import load_record, replay_log, replay_run
from reprobridge_sdk.run.measure import MEASURED_FIELDS, measure, measured_json, template_context
from reprobridge_sdk.run.recorded import plain_recorded
from reprobridge_sdk.run.replay import _in_run_folder, replayed_log, replayed_run
from reprobridge_sdk.run.select import load_artifact, select_launchers

PROGRAM = (
    "import json; print('acc=0.5'); print('acc=0.7'); "
    "json.dump(dict(acc=0.9, rows=[1, 2]), open('metrics.json', 'w'))"
)

MANIFEST: dict[str, Any] = {
    "rra_version": "1.0",
    "artifact": {"id": "plain", "title": "Plain", "license": "MIT", "paper": {"title": "P"}},
    "codebase": {
        "upstream": {
            "repository": "https://example.org/p.git",
            "commit": "0123456789abcdef0123456789abcdef01234567",
        },
        "refined": {"kind": "directory", "path": "code"},
    },
    "environment": {"python": f"{sys.version_info.major}.{sys.version_info.minor}"},
    "guide": {"path": "GUIDE.md"},
    "tasks": [
        {
            "id": task,
            "dataset": "d",
            "metric": "m",
            "published": {"value": 0.5},
            "direction": "higher",
            "kind": "full",
        }
        for task in ("last", "all", "json")
    ],
    "launchers": [
        {
            "id": "trivial",
            "argv": ["python", "-c", PROGRAM],
            "seeds": [0],
            "scope": "scored",
            "outputs": [{"id": "metrics", "path": "metrics.json"}],
            "measurements": [
                {"task": "last", "extract": {"kind": "regex", "pattern": "acc=([0-9.]+)"}},
                {
                    "task": "all",
                    "extract": {"kind": "regex", "pattern": "acc=([0-9.]+)", "occurrence": "all"},
                    "transform": {"scale": 100, "round": 1},
                },
                {
                    "task": "json",
                    "extract": {"kind": "json", "output": "metrics", "pointer": "/acc"},
                },
            ],
        }
    ],
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A real recorded run of the plain artifact: (artifact, run directory)."""
    root = tmp_path_factory.mktemp("plain") / "artifact"
    (root / "code").mkdir(parents=True)
    (root / "code" / "README").write_text("plain\n")
    (root / "GUIDE.md").write_text("# Plain\n")
    (root / "rra.yaml").write_text(yaml.safe_dump(MANIFEST, sort_keys=False))
    cli = [sys.executable, "-m", "reprobridge_sdk"]
    done = subprocess.run(
        [*cli, "run", str(root), "trivial", "--env", "current"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    (run_dir,) = (p for p in (root / "runs").iterdir() if (p / "record.json").is_file())
    return root, run_dir


def _typed(root: Path, run_dir: Path) -> list[dict[str, Any]]:
    """Replay as it was before the plain path: everything typed by the models."""
    record = load_record(run_dir)
    _, manifest = load_artifact(root)
    (launcher,) = select_launchers(manifest, [record.launcher], None)
    where = run_dir / "record.json"
    outputs = {
        o.id: _in_run_folder(run_dir, o.path, "output", where)
        for o in record.outputs
        if not o.preexisting
    }
    log = _in_run_folder(run_dir, record.log.path if record.log else "log.txt", "log", where)
    found = measure(
        launcher,
        log=log,
        files_base=root / record.workdir,
        outputs=outputs,
        context=template_context(record.params, record.seed, run_dir),
        roots=(run_dir, root),
    )
    return [m.model_dump(mode="json") for m in found]


def _plain(root: Path, run_dir: Path) -> list[dict[str, Any]]:
    """What ``extract --run`` writes."""
    return [measured_json(m) for m in replayed_run(run_dir, root)]


def _api(root: Path, run_dir: Path) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json") for m in replay_run(run_dir, root)]


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)  # NaN equals NaN


def _outcome(read: Any, root: Path, run_dir: Path) -> tuple[str, Any]:
    try:
        return "values", read(root, run_dir)
    except ReproBridgeError as exc:
        return "refused", [f.code for f in exc.findings]


#: Values a stranger may write where a field is expected.
HOSTILE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "0", "1.5", "true", "(", "../..", "/etc/passwd", "trivial", "log.txt"]),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.sampled_from(["path", "id", "x"]), st.text(max_size=4), max_size=2),
)

#: Where a record may be changed: the fields replay reads, and others.
RECORD_PLACES = [
    ("launcher",),
    ("seed",),
    ("params",),
    ("params", "lr"),
    ("workdir",),
    ("log",),
    ("log", "path"),
    ("outputs",),
    ("outputs", 0),
    ("outputs", 0, "id"),
    ("outputs", 0, "path"),
    ("outputs", 0, "preexisting"),
    ("status",),
    ("argv",),
]

#: Where the manifest may be changed: the launcher's measurements, the launcher, the version.
MEASUREMENT = ("launchers", 0, "measurements")
MANIFEST_PLACES = [
    ("rra_version",),
    ("launchers",),
    ("launchers", 0, "id"),
    ("launchers", 0, "seeds"),
    ("launchers", 0, "seeds", 0),
    ("launchers", 0, "params"),
    ("launchers", 0, "params", "lr"),
    MEASUREMENT,
    (*MEASUREMENT, 0),
    (*MEASUREMENT, 0, "task"),
    (*MEASUREMENT, 0, "extract"),
    (*MEASUREMENT, 0, "extract", "kind"),
    (*MEASUREMENT, 0, "extract", "pattern"),
    (*MEASUREMENT, 0, "extract", "occurrence"),
    (*MEASUREMENT, 1, "extract", "occurrence"),
    (*MEASUREMENT, 1, "transform"),
    (*MEASUREMENT, 1, "transform", "scale"),
    (*MEASUREMENT, 1, "transform", "round"),
    (*MEASUREMENT, 2, "extract", "pointer"),
    (*MEASUREMENT, 2, "extract", "output"),
    (*MEASUREMENT, 2, "extract", "file"),
    ("tasks",),
]

#: Valid variations, so that most examples are replayed (not only refused).
VALID = {
    ("seed",): st.integers(min_value=0, max_value=9),
    ("params", "lr"): st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=4)),
    (*MEASUREMENT, 0, "extract", "occurrence"): st.sampled_from(["first", "last", "all"]),
    (*MEASUREMENT, 1, "transform", "scale"): st.floats(-1e6, 1e6),
    (*MEASUREMENT, 1, "transform", "round"): st.integers(0, 6),
    (*MEASUREMENT, 2, "extract", "pointer"): st.sampled_from(["/acc", "/rows/1", "/nope"]),
    (*MEASUREMENT, 0, "extract", "pattern"): st.sampled_from(
        ["acc=([0-9.]+)", "acc=([0-9])", "acc=(?P<v>[0-9.]+)", "nothing ([0-9])"]
    ),
    (*MEASUREMENT, 1, "extract", "occurrence"): st.sampled_from(["first", "last", "all"]),
    ("outputs", 0, "preexisting"): st.booleans(),
    ("log", "path"): st.sampled_from(["log.txt", "missing.txt"]),
    ("launcher",): st.just("trivial"),
    ("rra_version",): st.sampled_from(["1.0", "1.1"]),
    ("launchers", 0, "seeds"): st.lists(st.integers(0, 9), max_size=3),
    ("launchers", 0, "params"): st.dictionaries(
        st.sampled_from(["lr", "n"]),
        st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=4), st.booleans()),
        max_size=2,
    ),
}


def _put(data: Any, place: tuple[Any, ...], value: Any) -> Any:
    """``data`` with ``value`` at ``place`` (a key added where it was missing); unchanged when
    ``place`` does not lead anywhere in it."""
    changed = copy.deepcopy(data)
    node = changed
    for step in place[:-1]:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return changed
    if isinstance(node, dict) or (
        isinstance(node, list) and isinstance(place[-1], int) and place[-1] < len(node)
    ):
        node[place[-1]] = value
    return changed


@st.composite
def _changes(
    draw: st.DrawFn, places: list[tuple[Any, ...]], *, hostile: bool
) -> list[tuple[tuple[Any, ...], Any]]:
    if not hostile:
        places = [place for place in places if place in VALID]
    chosen = draw(st.lists(st.sampled_from(places), max_size=3))
    values = [VALID[p] | HOSTILE if p in VALID else HOSTILE for p in chosen]
    return [(p, draw(v if hostile else VALID[p])) for p, v in zip(chosen, values, strict=True)]


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    record_changes=_changes(RECORD_PLACES, hostile=False),
    manifest_changes=_changes(MANIFEST_PLACES, hostile=False),
)
def test_the_plain_replay_gives_the_typed_values_on_valid_variations(
    recorded: tuple[Path, Path],
    record_changes: list[tuple[tuple[Any, ...], Any]],
    manifest_changes: list[tuple[tuple[Any, ...], Any]],
) -> None:
    typed, plain, _ = _both(recorded, record_changes, manifest_changes)
    assert typed[0] == "values", typed
    assert plain[0] == "values", plain
    assert _same(plain[1], typed[1]), (typed, plain)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    record_changes=_changes(RECORD_PLACES, hostile=True),
    manifest_changes=_changes(MANIFEST_PLACES, hostile=True),
)
def test_the_plain_replay_gives_what_the_typed_replay_gives_on_hostile_data(
    recorded: tuple[Path, Path],
    record_changes: list[tuple[tuple[Any, ...], Any]],
    manifest_changes: list[tuple[tuple[Any, ...], Any]],
) -> None:
    typed, plain, api = _both(recorded, record_changes, manifest_changes)
    assert api == typed  # the typed API refuses what the models refuse, as before
    if typed[0] == "values":
        assert plain[0] == "values", (typed, plain)
        assert _same(plain[1], typed[1]), (typed, plain)


def _both(
    recorded: tuple[Path, Path],
    record_changes: list[tuple[tuple[Any, ...], Any]],
    manifest_changes: list[tuple[tuple[Any, ...], Any]],
    readers: tuple[Any, ...] = (_typed, _plain, _api),
) -> tuple[tuple[str, Any], ...]:
    """The outcome of each reader (by default the typed and the plain replay of the run with
    these changes, and the typed API's, ``replay_run``); the files are restored after."""
    root, run_dir = recorded
    record_file, manifest_file = run_dir / "record.json", root / "rra.yaml"
    record_text, manifest_text = record_file.read_text(), manifest_file.read_text()
    record, manifest = json.loads(record_text), yaml.safe_load(manifest_text)
    for place, value in record_changes:
        record = _put(record, place, value)
    for place, value in manifest_changes:
        manifest = _put(manifest, place, value)
    try:
        record_file.write_text(json.dumps(record))
        manifest_file.write_text(yaml.safe_dump(manifest))
        # the plain readers never raise anything but an SDK error
        return tuple(_outcome(read, root, run_dir) for read in readers)
    finally:
        record_file.write_text(record_text)
        manifest_file.write_text(manifest_text)


def _log_inputs(run_dir: Path) -> tuple[Path, dict[str, Path]]:
    """The run's log and copied output, given to ``extract --log`` as a sample would be."""
    (output,) = json.loads((run_dir / "record.json").read_text())["outputs"]  # unchanged
    return run_dir / "log.txt", {"metrics": run_dir / output["path"]}


def _typed_log(root: Path, run_dir: Path) -> list[dict[str, Any]]:
    """``extract --log`` as it was before the plain path: the launcher typed by the models."""
    _, manifest = load_artifact(root)
    (launcher,) = select_launchers(manifest, ["trivial"], None)
    log, outputs = _log_inputs(run_dir)
    found = measure(
        launcher,
        log=log,
        files_base=log.parent,
        outputs=dict(outputs),
        context=template_context(launcher.params, (launcher.seeds or [0])[0], log.parent),
        roots=[root],
    )
    return [m.model_dump(mode="json") for m in found]


def _plain_log(root: Path, run_dir: Path) -> list[dict[str, Any]]:
    """What ``extract --log`` writes."""
    log, outputs = _log_inputs(run_dir)
    return [measured_json(m) for m in replayed_log(root, "trivial", log, outputs=outputs)]


def _api_log(root: Path, run_dir: Path) -> list[dict[str, Any]]:
    log, outputs = _log_inputs(run_dir)
    found = replay_log(root, "trivial", log, outputs=outputs)
    return [m.model_dump(mode="json") for m in found]


LOG_READERS = (_typed_log, _plain_log, _api_log)


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(manifest_changes=_changes(MANIFEST_PLACES, hostile=False))
def test_the_plain_log_replay_gives_the_typed_values_on_valid_variations(
    recorded: tuple[Path, Path], manifest_changes: list[tuple[tuple[Any, ...], Any]]
) -> None:
    typed, plain, api = _both(recorded, [], manifest_changes, LOG_READERS)
    assert typed[0] == "values", typed
    assert api == typed
    assert plain[0] == "values", plain
    assert _same(plain[1], typed[1]), (typed, plain)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(manifest_changes=_changes(MANIFEST_PLACES, hostile=True))
def test_the_plain_log_replay_gives_what_the_typed_replay_gives_on_hostile_data(
    recorded: tuple[Path, Path], manifest_changes: list[tuple[tuple[Any, ...], Any]]
) -> None:
    typed, plain, api = _both(recorded, [], manifest_changes, LOG_READERS)
    assert api == typed  # the typed API refuses what the models refuse, as before
    if typed[0] == "values":
        assert plain[0] == "values", (typed, plain)
        assert _same(plain[1], typed[1]), (typed, plain)


def test_the_unchanged_run_replays_its_recorded_values(recorded: tuple[Path, Path]) -> None:
    root, run_dir = recorded
    assert _same(
        _plain(root, run_dir), load_record(run_dir).model_dump(mode="json")["measurements"]
    )
    values = [m["value"] for m in _plain(root, run_dir)]
    assert values == [0.7, 60.0, 0.9]
    assert plain_recorded(run_dir) is not None  # of the plain shape: read without the models


@pytest.mark.parametrize(
    ("place", "value"),
    [(("seed",), "0"), (("outputs", 0, "preexisting"), "no"), (("seed",), 0.0)],
)
def test_a_field_pydantic_would_coerce_is_left_to_the_models(
    recorded: tuple[Path, Path], place: tuple[Any, ...], value: Any
) -> None:
    """Lax values (a seed written as a string or a float, ``"no"`` for false): the plain reading
    steps aside and the typed record decides, as before."""
    root, run_dir = recorded
    record_file = run_dir / "record.json"
    text = record_file.read_text()
    try:
        record_file.write_text(json.dumps(_put(json.loads(text), place, value)))
        assert plain_recorded(run_dir) is None
        assert _same(_plain(root, run_dir), _typed(root, run_dir))
    finally:
        record_file.write_text(text)


def test_every_field_of_a_measured_value_is_written() -> None:
    assert tuple(MeasuredValue.model_fields) == MEASURED_FIELDS


@pytest.mark.parametrize(
    "call",
    ["replayed_run(RUN, ROOT)", "replayed_log(ROOT, 'trivial', RUN + '/log.txt')"],
)
def test_a_plain_record_is_replayed_without_the_models(
    recorded: tuple[Path, Path], call: str
) -> None:
    root, run_dir = recorded
    code = (
        "import sys; from reprobridge_sdk.run.replay import replayed_log, replayed_run; "
        f"RUN, ROOT = {str(run_dir)!r}, {str(root)!r}; {call}; "
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pydantic', 'pydantic_core') or m.startswith('reprobridge_sdk.model'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ},
    )
    assert done.stdout.split() == []


@pytest.mark.parametrize(
    ("seeds", "params", "name"),
    [([3, 4], {"lr": 0.1}, "m3-0.1.json"), ([], {"lr": "x"}, "m0-x.json")],
)
def test_the_log_replay_fills_templates_from_the_launchers_seeds_and_params(
    recorded: tuple[Path, Path], seeds: list[int], params: dict[str, Any], name: str
) -> None:
    """``{seed}`` is the launcher's first seed (0 without seeds), ``{lr}`` its param: read
    plainly, they name the same file the typed launcher names."""
    run_dir = recorded[1]
    changes: list[tuple[tuple[Any, ...], Any]] = [
        (
            (*MEASUREMENT, 2, "extract"),
            {"kind": "json", "file": "m{seed}-{lr}.json", "pointer": "/acc"},
        ),
        (("launchers", 0, "params"), params),
        (("launchers", 0, "seeds"), seeds),
    ]
    (run_dir / name).write_text('{"acc": 0.25}')
    try:
        typed, plain, api = _both(recorded, [], changes, LOG_READERS)
    finally:
        (run_dir / name).unlink()
    assert typed[0] == "values", typed
    assert [m["value"] for m in typed[1]] == [0.7, 60.0, 0.25]
    assert api == typed
    assert _same(plain[1], typed[1]), (typed, plain)

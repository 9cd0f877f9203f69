"""Semantic layer: rules a schema cannot express, on plain data (R codes).

Every rule reads the document defensively: the structural layer reports wrong types, so a rule
skips what it cannot read and never raises on a structurally broken manifest.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from reprobridge_sdk.extract import kinds
from reprobridge_sdk.extract.pattern import PATTERNS, check_pattern
from reprobridge_sdk.extract.template import TEMPLATE_BUILTINS, check_templates
from reprobridge_sdk.findings import Finding
from reprobridge_sdk.io.document import Document
from reprobridge_sdk.io.pointer import escape_pointer
from reprobridge_sdk.plugins import EXTRACTOR_KIND, missing_schemes
from reprobridge_sdk.validation._plain import mapping, mappings

from ._cycles import cycles
from .version import declared_version

__all__ = ["check_semantics", "outside_references"]

_GUIDE_LISTS = ("ambiguities", "changes", "discrepancies", "pitfalls", "open_choices")
_SINGLE_RUN = frozenset({"single", "mean", "median", "min", "max"})
_PLUGIN_KIND = re.compile(EXTRACTOR_KIND)


#: ``(pointer, mapping)`` pairs of a list, as :func:`_items` yields them.
_Listed = list[tuple[str, dict[str, Any]]]


def _strs(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str):
                yield f"{pointer}/{index}", item


class _Checker:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.data: dict[str, Any] = doc.data if isinstance(doc.data, dict) else {}
        self.out: list[Finding] = []
        # The tasks, the launchers and each launcher's measurements are listed once (with
        # their pointers) and walked by every rule that needs them, in document order.
        self.task_list = list(mappings(self.data.get("tasks"), "/tasks"))
        self.launcher_list = list(mappings(self.data.get("launchers"), "/launchers"))
        self.measurements = [
            list(mappings(launcher.get("measurements"), f"{ptr}/measurements"))
            for ptr, launcher in self.launcher_list
        ]
        self.tasks = {
            item["id"]: (ptr, item)
            for ptr, item in self.task_list
            if isinstance(item.get("id"), str)
        }
        self.launchers = {
            item["id"]: (ptr, item)
            for ptr, item in self.launcher_list
            if isinstance(item.get("id"), str)
        }
        environment = mapping(self.data.get("environment"))
        self.data_items = {
            item["id"]: (ptr, item)
            for ptr, item in mappings(environment.get("data"), "/environment/data")
            if isinstance(item.get("id"), str)
        }

    def add(self, code: str, message: str, path: str, hint: str | None = None) -> None:
        self.out.append(self.doc.finding(code, message, path=path, hint=hint))

    def run(self) -> list[Finding]:
        self.unique_ids()
        self.references()
        self.tasks_rules()
        self.launcher_rules()
        self.cycles()
        self.data_rules()
        self.refined_kind()
        self.resources()
        self.plugin_kinds()
        self.out += missing_schemes(self.doc)  # D015 as a warning (plugins.missing_schemes)
        return self.out

    # R001 ---------------------------------------------------------------------------------

    def _unique(self, items: Iterable[tuple[str, dict[str, Any]]], what: str) -> None:
        seen: dict[str, str] = {}
        for ptr, item in items:
            ident = item.get("id")
            if not isinstance(ident, str):
                continue
            if ident in seen:
                self.add(
                    "R001",
                    f"{what} id {ident!r} is used twice (first at {seen[ident]})",
                    f"{ptr}/id",
                    hint="ids must be unique within their list",
                )
            else:
                seen[ident] = ptr

    def unique_ids(self) -> None:
        self._unique(self.task_list, "task")
        self._unique(self.launcher_list, "launcher")
        environment = mapping(self.data.get("environment"))
        self._unique(mappings(environment.get("data"), "/environment/data"), "data item")
        guide = mapping(self.data.get("guide"))
        for name in _GUIDE_LISTS:
            self._unique(mappings(guide.get(name), f"/guide/{name}"), name.rstrip("s"))
        for ptr, launcher in self.launcher_list:
            self._unique(mappings(launcher.get("outputs"), f"{ptr}/outputs"), "output")
            self._unique(mappings(launcher.get("landmarks"), f"{ptr}/landmarks"), "landmark")

    # R002-R005 ----------------------------------------------------------------------------

    def _task_ref(self, ident: Any, pointer: str) -> None:
        if not isinstance(self.data.get("tasks"), list):
            return  # no task list to resolve against: the structural layer reports it
        if isinstance(ident, str) and ident not in self.tasks:
            self.add("R002", f"there is no task {ident!r}", pointer, hint=self._close(ident))

    def _close(self, ident: str, pool: str = "tasks") -> str | None:
        names = {"tasks": self.tasks, "launchers": self.launchers, "data": self.data_items}[pool]
        close = difflib.get_close_matches(ident, list(names), n=1)
        if close:
            return f"did you mean {close[0]!r}?"
        if names:
            return f"known {pool}: {', '.join(sorted(names))}"
        return None

    def references(self) -> None:
        guide = mapping(self.data.get("guide"))
        for name in _GUIDE_LISTS:
            for ptr, record in mappings(guide.get(name), f"/guide/{name}"):
                for tptr, ident in _strs(record.get("tasks"), f"{ptr}/tasks"):
                    self._task_ref(ident, tptr)
        # spec "robustness": an absent optional list is empty, so references into it are
        # checked; a target list that is present but not a list is not resolved against.
        data_list = mapping(self.data.get("environment")).get("data")
        check_data = data_list is None or isinstance(data_list, list)
        for (ptr, launcher), measurements in zip(
            self.launcher_list, self.measurements, strict=True
        ):
            outputs: set[str] | None = None  # None: not a list, not resolved against
            if launcher.get("outputs") is None or isinstance(launcher.get("outputs"), list):
                outputs = {
                    item["id"]
                    for _, item in mappings(launcher.get("outputs"), f"{ptr}/outputs")
                    if isinstance(item.get("id"), str)
                }
            for mptr, measurement in measurements:
                self._task_ref(measurement.get("task"), f"{mptr}/task")
                output = mapping(measurement.get("extract")).get("output")
                if isinstance(output, str):
                    self._output_ref(launcher, outputs, output, f"{mptr}/extract/output")
            self._launcher_refs(ptr, launcher, check_data)
            self._sample_refs(ptr, launcher, outputs)

    def _output_ref(
        self, launcher: dict[str, Any], outputs: set[str] | None, key: str, where: str
    ) -> None:
        if outputs is not None and key not in outputs:
            message = f"launcher {launcher.get('id')!r} declares no output {key!r}"
            self.add("R004", message, where)

    def _launcher_refs(self, ptr: str, launcher: dict[str, Any], check_data: bool) -> None:
        """R003 for a launcher it needs, R005 for a data item it reads, that do not exist."""
        for nptr, ident in _strs(launcher.get("needs"), f"{ptr}/needs"):
            if ident not in self.launchers:
                hint = self._close(ident, "launchers")
                self.add("R003", f"there is no launcher {ident!r}", nptr, hint=hint)
        for dptr, ident in _strs(launcher.get("data"), f"{ptr}/data"):
            if check_data and ident not in self.data_items:
                hint = self._close(ident, "data")
                self.add("R005", f"there is no data item {ident!r}", dptr, hint=hint)

    def _sample_refs(self, ptr: str, launcher: dict[str, Any], outputs: set[str] | None) -> None:
        """R002 and R004 in the samples: tasks expected, outputs listed and digested."""
        for sptr, sample in mappings(launcher.get("samples"), f"{ptr}/samples"):
            for key in mapping(sample.get("expected")):
                self._task_ref(key, f"{sptr}/expected/{escape_pointer(key)}")
            sample_outputs = mapping(sample.get("outputs"))
            for key in sample_outputs:
                self._output_ref(launcher, outputs, key, f"{sptr}/outputs/{escape_pointer(key)}")
            for key in mapping(sample.get("outputs_sha256")):
                if key not in sample_outputs:
                    self.add(
                        "R004",
                        f"the sample has no output {key!r} to take a digest of",
                        f"{sptr}/outputs_sha256/{escape_pointer(key)}",
                        hint="digest the outputs the sample lists under 'outputs'",
                    )

    # R006-R011 ----------------------------------------------------------------------------

    def tasks_rules(self) -> None:
        measured: set[str] = set()
        for (_, launcher), measurements in zip(self.launcher_list, self.measurements, strict=True):
            if launcher.get("scope") != "scored":
                continue
            for _, measurement in measurements:
                if isinstance(measurement.get("task"), str):
                    measured.add(measurement["task"])
        for ident, (ptr, task) in self.tasks.items():
            if ident not in measured and not _not_measured(task):
                self.add(
                    "R006",
                    f"no scored launcher measures task {ident!r}",
                    ptr,
                    hint="add a measurement of this task to a launcher with scope 'scored'",
                )
        for ptr, task in self.task_list:
            self._published(ptr, task)
            observations = mapping(task.get("reference")).get("observations", [])
            count = len(observations) if isinstance(observations, list) else 0
            if _not_measured(task):
                if count:
                    self.add(
                        "R040",
                        f"task {task.get('id')!r} says it is not measured but has {count} "
                        "reference observation(s)",
                        f"{ptr}/reference/not_measured",
                        hint="remove 'not_measured' or the observations: one of them is wrong",
                    )
                continue
            if count < 2:
                self.add(
                    "R010",
                    f"task {task.get('id')!r} has {count} reference observation(s); "
                    "its compatibility interval needs at least 2",
                    f"{ptr}/reference/observations",
                    hint="record independent reference runs (five are typical)",
                )

    @functools.cached_property
    def _discrepant(self) -> frozenset[str]:
        """Ids of the tasks a discrepancy of the guide names (exempt from R011), read once."""
        named: set[str] = set()
        discrepancies = mapping(self.data.get("guide")).get("discrepancies")
        for item in discrepancies if isinstance(discrepancies, list) else []:
            tasks = mapping(item).get("tasks")
            if isinstance(tasks, list):
                named.update(t for t in tasks if isinstance(t, str))
        return frozenset(named)

    def _published(self, ptr: str, task: dict[str, Any]) -> None:
        published = task.get("published")
        if not isinstance(published, dict):
            return
        value, span = published.get("value"), published.get("range")
        has_value, has_range = value is not None, span is not None
        if has_value == has_range:
            what = "both a value and a range" if has_value else "neither a value nor a range"
            self.add(
                "R007",
                f"published has {what}; give exactly one",
                f"{ptr}/published",
            )
            return
        if has_range:
            if not (isinstance(span, list) and len(span) == 2 and all(map(_num, span))):
                return
            if span[0] > span[1]:
                self.add(
                    "R007",
                    f"published range [{span[0]}, {span[1]}] is inverted",
                    f"{ptr}/published",
                    hint="write the lower bound first",
                )
                return
            center = (span[0] + span[1]) / 2
        elif _num(value):
            center = value
        else:
            return
        values = _finite_values(mapping(task.get("reference")).get("observations", []))
        task_id = task.get("id")
        exempt = isinstance(task_id, str) and task_id in self._discrepant
        if not exempt and (far := outside_references(center, values)) is not None:
            low, high = far
            self.add(
                "R011",
                f"published {center:g} lies outside the reference observations "
                f"[{low:g}, {high:g}] by more than 10%",
                f"{ptr}/published",
                hint="check the published value, its unit and the transform",
            )

    def launcher_rules(self) -> None:
        for (ptr, launcher), measurements in zip(
            self.launcher_list, self.measurements, strict=True
        ):
            argv = launcher.get("argv")
            if launcher.get("shell") is True and isinstance(argv, list) and len(argv) != 1:
                self.add(
                    "R013",
                    f"a shell launcher has exactly one argv element, not {len(argv)}",
                    f"{ptr}/argv",
                    hint="join the command into one string, or set shell: false",
                )
            self._templates(ptr, launcher, measurements)
            self._statistics(ptr, launcher, measurements)
            self._patterns(ptr, launcher, measurements)

    def _templates(self, ptr: str, launcher: dict[str, Any], measurements: _Listed) -> None:
        params = mapping(launcher.get("params"))
        known = TEMPLATE_BUILTINS | set(params)
        if launcher.get("seeds") in (None, []):
            known -= {"seed"}  # a launcher without seeds runs once, with no {seed} (spec R014)
        places: list[tuple[str, Any]] = list(_strs(launcher.get("argv"), f"{ptr}/argv"))
        for key, value in mapping(launcher.get("env")).items():
            places.append((f"{ptr}/env/{escape_pointer(key)}", value))
        for optr, output in mappings(launcher.get("outputs"), f"{ptr}/outputs"):
            places.append((f"{optr}/path", output.get("path")))
        for mptr, measurement in measurements:
            extract = measurement.get("extract")
            file = extract.get("file") if isinstance(extract, dict) else None
            if isinstance(file, str):  # the only places a template can be
                places.append((f"{mptr}/extract/file", file))
        check_templates(places, known, self.add)

    def _statistics(self, ptr: str, launcher: dict[str, Any], measurements: _Listed) -> None:
        if launcher.get("scope") != "scored":
            return
        seeds = launcher.get("seeds", [])
        if not isinstance(seeds, list):
            return  # the structural layer reports the wrong type
        runs = len(seeds) or 1
        data_refs = {d for _, d in _strs(launcher.get("data"), "")}
        reported_r008 = False
        for mptr, measurement in measurements:
            found = self.tasks.get(str(measurement.get("task")))
            if found is None:
                continue
            task = found[1]
            statistic = mapping(task.get("statistic"))
            wanted = statistic.get("seeds", 1)
            if isinstance(wanted, int) and not isinstance(wanted, bool) and wanted != runs:
                if not reported_r008:
                    self.add(
                        "R008",
                        f"task {task.get('id')!r} is reported over {wanted} seed(s); "
                        f"launcher {launcher.get('id')!r} runs {runs}",
                        f"{ptr}/seeds",
                        hint=f"declare {wanted} seed(s)",
                    )
                reported_r008 = True
            how = statistic.get("aggregate", "single")
            mine = measurement.get("aggregate", "mean")
            if isinstance(how, str) and isinstance(mine, str) and how != mine:
                one_run = wanted == 1 and runs == 1
                if not (one_run and how in _SINGLE_RUN and mine in _SINGLE_RUN):
                    self.add(
                        "R009",
                        f"the measurement aggregates seeds by {mine!r}; "
                        f"task {task.get('id')!r} reports the {how!r}",
                        f"{mptr}/aggregate",
                        hint=f"use aggregate: {how}",
                    )
            if task.get("kind") == "full":
                self._substitutes(ptr, launcher, task, data_refs)

    def _substitutes(
        self, ptr: str, launcher: dict[str, Any], task: dict[str, Any], data_refs: set[str]
    ) -> None:
        """R020: a full-procedure task measured by a launcher that reads a checkpoint
        standing in for training (each checkpoint once, in ``data_refs``)."""
        for dptr, ident in _strs(launcher.get("data"), f"{ptr}/data"):
            item = self.data_items.get(ident)
            if item is None or ident not in data_refs:
                continue
            if item[1].get("kind") == "checkpoint" and item[1].get("substitutes_training"):
                self.add(
                    "R020",
                    f"launcher reads checkpoint {ident!r}, which stands in for "
                    f"training, but measures the full-procedure task {task.get('id')!r}",
                    dptr,
                    hint="measure an evaluation task, or train instead",
                )
                data_refs.discard(ident)

    def _patterns(self, ptr: str, launcher: dict[str, Any], measurements: _Listed) -> None:
        """Landmark patterns (R016, X004), then each built-in extractor kind's own rules."""
        for lptr, landmark in mappings(launcher.get("landmarks"), f"{ptr}/landmarks"):
            check_pattern(landmark.get("pattern"), f"{lptr}/pattern", self.add)
        for mptr, measurement in measurements:
            extract = mapping(measurement.get("extract"))
            kind = extract.get("kind")
            entry = kinds.KINDS.get(kind) if isinstance(kind, str) else None
            if entry is not None and entry.check is not None:
                entry.check(extract, f"{mptr}/extract", self.add)

    def plugin_kinds(self) -> None:
        """X005: an ``x-`` extractor kind that no installed plugin provides (a warning: the
        runner cannot extract it, the audit says inconclusive)."""
        from reprobridge_sdk import plugins  # noqa: PLC0415 - reads entry points once
        from reprobridge_sdk.extract._errors import plugin_hint  # noqa: PLC0415

        provided: tuple[str, ...] | None = None
        plugin_kind: dict[str, bool] = {}  # the answer of the pattern, once per kind
        for measurements in self.measurements:
            for mptr, measurement in measurements:
                kind = mapping(measurement.get("extract")).get("kind")
                if not isinstance(kind, str):
                    continue
                known = plugin_kind.get(kind)
                if known is None:
                    known = plugin_kind[kind] = _PLUGIN_KIND.fullmatch(kind) is not None
                if not known:
                    continue  # not a plugin kind, or a malformed one (the S layer's)
                if provided is None:
                    provided = plugins.plugin_names(plugins.EXTRACTORS)
                if kind not in provided:
                    self.add(
                        "X005",
                        f"no installed plugin provides the extractor kind {kind!r}: task "
                        f"{measurement.get('task')!r} cannot be extracted here",
                        f"{mptr}/extract/kind",
                        hint=plugin_hint("no-plugin"),
                    )

    # R015 ---------------------------------------------------------------------------------

    def cycles(self) -> None:
        """R015 once per group of launchers that need each other (spec "launchers").

        Reported at the ``needs`` of the group's launcher that comes first in the document
        (:func:`._cycles.cycles`).
        """
        graph = {
            ident: [n for _, n in _strs(item.get("needs"), "") if n in self.launchers]
            for ident, (_, item) in self.launchers.items()
        }
        for members in cycles(graph):
            ptr = self.launchers[members[0]][0]
            self.add(
                "R015",
                "launchers need each other in a cycle: " + ", ".join(members),
                f"{ptr}/needs",
            )

    # R018, R019, R012 ---------------------------------------------------------------------

    def data_rules(self) -> None:
        environment = mapping(self.data.get("environment"))
        for ptr, item in mappings(environment.get("data"), "/environment/data"):
            source = item.get("source")
            if isinstance(source, dict):
                named = [k for k in ("url", "package", "codebase") if source.get(k) is not None]
                if len(named) != 1:
                    self.add(
                        "R018",
                        f"a data source names exactly one of url, package, codebase; "
                        f"this one names {len(named)}",
                        f"{ptr}/source",
                    )
            if item.get("access") in ("gated", "manual") and not item.get("instructions"):
                self.add(
                    "R019",
                    f"data item {item.get('id')!r} is {item.get('access')} "
                    "but gives no instructions",
                    ptr,
                    hint="say in 'instructions' what a user must do to obtain it",
                )

    def refined_kind(self) -> None:
        refined = mapping(mapping(self.data.get("codebase")).get("refined"))
        kind = refined.get("kind")
        ptr = "/codebase/refined"
        if kind == "directory":
            if refined.get("path") is None:
                self.add("R012", "kind 'directory' needs 'path'", ptr)
            if refined.get("patches"):
                self.add("R012", "kind 'directory' takes no 'patches'", ptr)
        elif kind == "patches":
            if not refined.get("patches") and (declared_version(self.data) or (2, 0)) < (1, 1):
                # Format 1.1: an empty series is the upstream commit unchanged; 1.0 needs one.
                self.add(
                    "V005",
                    "an empty patch series was added in format 1.1; this document is 1.0",
                    f"{ptr}/patches" if "patches" in refined else ptr,
                    hint="declare rra_version '1.1' (`reprobridge upgrade`), or add a patch",
                )
            if refined.get("path") is not None:
                self.add("R012", "kind 'patches' takes no 'path'", ptr)

    # R025, R026 ---------------------------------------------------------------------------

    def resources(self) -> None:
        accelerator = mapping(mapping(self.data.get("environment")).get("accelerator"))
        no_gpu = accelerator.get("kind", "none") == "none"
        for ptr, launcher in self.launchers.values():
            resources = mapping(launcher.get("resources"))
            walltime: Any = resources.get("walltime")
            timeout: Any = launcher.get("timeout")
            if _num(walltime) and _num(timeout) and walltime < timeout:
                self.add(
                    "R025",
                    f"walltime {walltime:g} s is shorter than the timeout {timeout:g} s",
                    f"{ptr}/resources/walltime",
                    hint="a batch scheduler would stop the run first: raise walltime",
                )
            gpus: Any = resources.get("gpus")
            if _num(gpus) and gpus > 0 and no_gpu:
                self.add(
                    "R026",
                    f"the launcher asks for {gpus} GPUs but the environment declares no "
                    "accelerator",
                    f"{ptr}/resources/gpus",
                    hint="declare the GPU under environment.accelerator (kind, gpus)",
                )


def outside_references(center: float, values: Sequence[float]) -> tuple[float, float] | None:
    """The range of ``values`` when ``center`` lies outside it by more than 10% of itself (R011).

    ``None`` when it lies within, or when fewer than two values make no range.
    """
    if len(values) < 2:
        return None
    low, high = min(values), max(values)
    slack = 0.10 * abs(center)
    return (low, high) if center < low - slack or center > high + slack else None


def _finite_values(observations: Any) -> list[Any]:
    """The values of the observations that are finite numbers (:func:`_num`), in order."""
    if not isinstance(observations, list):
        return []
    return [v for item in observations if _num(v := mapping(item).get("value"))]


def _num(value: Any) -> bool:
    """A finite number that float arithmetic can handle (huge YAML integers are not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value) if isinstance(value, float) else abs(value) < 2**1000


def check_semantics(doc: Document) -> list[Finding]:
    """R findings for a document whose data is a mapping (anything else gives none)."""
    if not isinstance(doc.data, dict):
        return []
    # Size the process's pattern cache to this artifact, so that every later layer (replay,
    # extraction, the audit) finds the patterns checked and compiled here.
    PATTERNS.fit(_pattern_count(doc.data))
    return _Checker(doc).run()


def _pattern_count(data: dict[str, Any]) -> int:
    """How many author patterns (landmarks, extractors) the manifest holds."""
    count = 0
    for _, launcher in mappings(data.get("launchers"), ""):
        for _, landmark in mappings(launcher.get("landmarks"), ""):
            count += isinstance(landmark.get("pattern"), str)
        for _, measurement in mappings(launcher.get("measurements"), ""):
            count += isinstance(mapping(measurement.get("extract")).get("pattern"), str)
    return count


def _not_measured(task: object) -> bool:
    """Whether a task states why it has no reference observations (spec "tasks", since 1.1):
    then it needs none (no R010) and no scored measurement (no R006)."""
    reason = mapping(mapping(task).get("reference")).get("not_measured")
    return isinstance(reason, str) and bool(reason)

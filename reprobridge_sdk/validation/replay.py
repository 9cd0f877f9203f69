"""Replay layer: extractors against the sample logs and outputs an artifact ships (X codes).

For each ``samples`` entry of a launcher, every measurement whose task the sample lists in
``expected`` is extracted from the sample's log and output files with the runner's own
extraction code, transformed, and compared with the expected value (relative tolerance
1e-9). Nothing found is X001, something that is not a number X002, another value X003.
Missing sample files are the files layer's F004 and template errors the semantic layer's
R014, so they are not reported again here. An ``x-`` extractor kind is extracted by its
plugin: one that fails on the sample is X006, one that does not return in time X007 (both at
the extractor's ``kind``); a kind no installed plugin provides is the semantic layer's X005.

``file:`` extractors read relative to the sample log's directory; ``{run_dir}`` is that
directory, ``{seed}`` the sample's seed (else the launcher's first seed, else 0).

The same samples check the launcher's landmarks: a launcher that ships at least one sample
log must reach each of its landmarks on some line of one of those logs, as the runner
searches a run's log line by line (R034, warning: a landmark no shipped run reached is
either wrong or reached only sometimes, and a check that waits for it fails). A pattern
outside the dialect is X004 and a sample log that cannot be read is the files layer's.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from reprobridge_sdk.findings import Finding
from reprobridge_sdk.io import safefs
from reprobridge_sdk.io.document import Document, escape_pointer

from .files import kind_of, resolve_path, usable_path

if TYPE_CHECKING:
    from reprobridge_sdk.extract.extraction import ExtractionCache

__all__ = ["check_replay"]

#: Extraction failures that are about the sample's content; others (a missing file, a bad
#: template or a broken extractor) are reported by the files, semantic or structural layer.
_REPORTED = frozenset(
    {"no-match", "not-number", "bad-json-pointer", "bad-csv", "bad-yaml", "decode"}
)
#: A plugin extractor's failure on a sample is the sample's finding (a missing plugin is the
#: semantic layer's X005 warning, so it is not reported again here).
_PLUGIN_CODES = {"plugin-failed": "X006", "plugin-timeout": "X007"}


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _file(root: Path, value: Any) -> Path | None:
    if not usable_path(value):
        return None
    path = resolve_path(root, root, value)
    return path if kind_of(path) == "file" else None


def _log_lines(log: Path, cache: dict[Path, list[str] | None]) -> list[str] | None:
    if log not in cache:
        try:
            text = safefs.read_text(log, max_bytes=safefs.MAX_TEXT_BYTES, errors="replace")
        except (OSError, safefs.UnsafeFileError):
            cache[log] = None
        else:
            cache[log] = [line.removesuffix("\r") for line in text.split("\n")]
    return cache[log]


def _check_landmarks(
    doc: Document, lindex: int, launcher: dict[str, Any], logs: list[Path]
) -> list[Finding]:
    """R034 for each landmark that no line of the launcher's sample logs matches."""
    from reprobridge_sdk.extract.pattern import (  # noqa: PLC0415 - lazy: only with samples
        PatternError,
        author_pattern,
    )

    landmarks = launcher.get("landmarks")
    if not logs or not isinstance(landmarks, list):
        return []
    cache: dict[Path, list[str] | None] = {}
    texts = [lines for log in logs if (lines := _log_lines(log, cache)) is not None]
    if not texts:
        return []
    out: list[Finding] = []
    for index, landmark in enumerate(landmarks):
        pattern = landmark.get("pattern") if isinstance(landmark, dict) else None
        if not isinstance(pattern, str) or not pattern:
            continue
        try:
            regex = author_pattern(pattern)
        except PatternError:
            continue  # X004, from the semantic layer
        if any(regex.search(line) for lines in texts for line in lines):
            continue
        name = landmark.get("id")
        out.append(
            doc.finding(
                "R034",
                f"landmark {name!r}: no line of the launcher's {len(texts)} sample log(s) "
                "matches its pattern",
                path=f"/launchers/{lindex}/landmarks/{index}/pattern",
                hint="choose a line every run prints, or ship a sample log that reaches it",
            )
        )
    return out


def check_replay(
    doc: Document, root: Path, *, cache: ExtractionCache | None = None
) -> list[Finding]:
    """X findings for the samples of every launcher of the artifact at ``root``, and R034
    for each landmark those samples never reach.

    ``cache``: where each sample file's parse or scan is kept for all the measurements that
    read it (by default one made for this call and closed after it)."""
    data = doc.data if isinstance(doc.data, dict) else {}
    launchers = data.get("launchers")
    if not isinstance(launchers, list):
        return []
    from reprobridge_sdk.extract.extraction import (  # noqa: PLC0415 - lazy: only with samples
        ExtractionCache,
    )

    if cache is not None:
        return _replay(doc, root, launchers, cache)
    # One cache for the replay: a sample's log is scanned and its output parsed once for all
    # the measurements that read it, not once per measurement.
    own = ExtractionCache()
    try:
        return _replay(doc, root, launchers, own)
    finally:
        own.close()


def _replay(
    doc: Document, root: Path, launchers: list[Any], cache: ExtractionCache
) -> list[Finding]:
    from reprobridge_sdk.extract.extraction import (  # noqa: PLC0415 - lazy: only with samples
        ExtractionError,
        extract_value,
        same_value,
    )

    out: list[Finding] = []
    for lindex, launcher in enumerate(launchers):
        if not isinstance(launcher, dict) or not isinstance(launcher.get("samples"), list):
            continue
        params = {str(k): v for k, v in _map(launcher.get("params")).items()}
        seeds = launcher.get("seeds") if isinstance(launcher.get("seeds"), list) else []
        # each sample's log resolved once, for the landmarks and the extractors
        sample_logs = [
            (sindex, sample, _file(root, sample.get("log")))
            for sindex, sample in enumerate(launcher["samples"])
            if isinstance(sample, dict)
        ]
        logs = [log for _, _, log in sample_logs if log is not None]
        out += _check_landmarks(doc, lindex, launcher, logs)
        for sindex, sample, log in sample_logs:
            expected = _map(sample.get("expected"))
            outputs = {
                str(key): path
                for key, value in _map(sample.get("outputs")).items()
                if (path := _file(root, value)) is not None
            }
            base = log.parent if log is not None else root
            seed = sample.get("seed", seeds[0] if seeds else 0)
            context: dict[str, object] = {**params, "seed": seed, "run_dir": str(base)}
            sptr = f"/launchers/{lindex}/samples/{sindex}"
            measurements = launcher.get("measurements")
            if not isinstance(measurements, list):
                continue
            for mindex, measurement in enumerate(measurements):
                if not isinstance(measurement, dict):
                    continue
                task = measurement.get("task")
                if not isinstance(task, str) or task not in expected:
                    continue
                want = expected[task]
                extractor = measurement.get("extract")
                if not isinstance(extractor, dict) or isinstance(want, bool):
                    continue
                if not isinstance(want, (int, float)) or abs(want) > 1e300:
                    continue  # not a number float arithmetic can compare
                where = f"{sptr}/expected/{escape_pointer(task)}"
                try:
                    got = extract_value(
                        extractor,
                        log=log,
                        files_base=base,
                        outputs=outputs,
                        context=context,
                        root=root,
                        max_bytes=safefs.MAX_TEXT_BYTES,
                        transform=measurement.get("transform"),
                        cache=cache,
                    )
                    value = got.mean  # as the runner records it ('all': the mean)
                except ExtractionError as exc:
                    if exc.refusal is not None and exc.refusal.reason == "too-large":
                        item = safefs.refusal(exc.refusal)
                        out.append(doc.finding(item.code, exc.message, path=sptr, hint=item.hint))
                        continue
                    mptr = f"/launchers/{lindex}/measurements/{mindex}/extract"
                    if exc.reason in _PLUGIN_CODES:
                        hint = exc.findings[0].hint if exc.findings else None
                        code = _PLUGIN_CODES[exc.reason]
                        message = f"task {task!r}: {exc.message}"
                        out.append(doc.finding(code, message, path=f"{mptr}/kind", hint=hint))
                        continue
                    if exc.reason not in _REPORTED:
                        continue
                    code = "X002" if exc.reason == "not-number" else "X001"
                    out.append(doc.finding(code, f"task {task!r}: {exc.message}", path=mptr))
                    continue
                except (TypeError, ValueError, KeyError) as exc:
                    # A structurally broken extractor or transform: the S layer reports it.
                    del exc
                    continue
                if not same_value(value, float(want)):
                    out.append(
                        doc.finding(
                            "X003",
                            f"task {task!r}: the extractor gives {value!r} on the sample, "
                            f"not the expected {want!r}",
                            path=where,
                            hint="fix the extractor or the expected value",
                        )
                    )
    return out

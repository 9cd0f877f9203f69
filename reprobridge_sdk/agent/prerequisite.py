"""Prerequisite steps: the command of the repository that writes a file a launcher reads.

A README says "first run ``python generate_dataset.py``, then ``python train.py``"; run alone,
``train.py`` stops with ``FileNotFoundError``. When a smoke run stops so, for a path ``P``
(``No such file or directory: 'P'``, relative to the launcher's working directory, or an
absolute path inside the repository: code that builds its paths from ``__file__``), and no fix
rule of :mod:`reprobridge_sdk.agent.fixes` applies, the Reproducer looks here for the step
that writes ``P`` and, gated like a fix, makes the launcher run it first.

**The producer**, first found in this order:

1. a README command (:func:`reprobridge_sdk.agent.intake.readme_commands`: code blocks, shell
   scripts followed, console scripts of the repository's package) that names ``P`` among its
   arguments (``--output P``, ``--output=P``, from its working directory), or whose script
   writes ``P`` (below); of several, the one whose argument values occur most in ``P``'s
   file name (``--sufix small`` for ``loc_train_..._small.npy``), then README order;
2. a script of the repository whose source writes ``P``, run as ``python SCRIPT`` with no
   argument from the folder its write is relative to.

A script **writes** ``P`` when a write call (``np.save``, ``np.savez``, ``savetxt``,
``to_csv``, ``to_pickle``, ``torch.save``, ``save_word2vec_format``, ``write_text``,
``open(..., "w"|"a"|"x")``, ...) names a path whose literal start, joined to the step's
working directory, is ``P`` or starts ``P``, with at least three characters of ``P``'s file
name, and whose literal end (``".npy"``) ends ``P``. A name built at run time beyond that
(``args.out``) is not matched: the step must be recognisable from its source.

**Never adopted** (B056, a warning; the run stays failed, B007): a path ``P`` that leaves the
repository (``..``) or holds a character a shell reads (anything but letters, digits and
``._+@%=,/-``); ``setup.py`` (packaging, not a step of the experiment); a producer that only a
shell can run (a pipe, a redirection, ``rm``, a second program: the whole line is the
author's, not a step); one whose arguments name a path outside the repository (absolute,
``~`` or ``..`` leaving it) or a template (``{``); the launcher's own script (a cycle), or a
step the launcher already runs; more than :data:`MAX_STEPS` steps.

**How it runs.** The launcher becomes one shell line, ``(cd STEP_DIR && STEP) && LAUNCHER``
(:func:`compose`, at run time and in the manifest): a launcher the step ``needs`` cannot hand
its file over, since every sandboxed run works on a copy of the code of its own, and a
re-execution reruns one run alone. The plan keeps the launcher's argv as it was
(``prepare`` holds the steps), so its seed and smoke options stay editable. The smoke
launcher's step passes :data:`SIZE_OPTIONS` small (never larger than the README's value);
the scored launcher's step is the README's command as written. A smoke run with its steps
that still runs past its budget shortens the steps too (the smoke-scope rule,
:mod:`reprobridge_sdk.agent._convenience_changes`): :func:`shorter_step` passes their size
options at :data:`SHORTEST_SIZES` and their iteration counts small.

**The gate.** The launcher runs again with the step first. The step failing (its script in
the traceback, not the launcher's) with an error a fix rule mends keeps the step (the next
round fixes the step's code, e.g. a removed API); failing otherwise is B057 and the step is
dropped (a module the environment still lacks is named in its hint: the claims file's
``requirements`` add one), and so is a step after which the run fails without a traceback. A
``FileNotFoundError`` of the step for a file the launcher's own script writes is the cycle,
B056. The launcher still missing ``P`` is B057 (the step does not write it) and the step is
dropped. A kept step is a recorded decision (:func:`decision`) with the command and why.

**Its environment.** The environment serves the step too: before the launcher runs again
with a new step, the third-party modules the step's script reaches (its import closure,
:mod:`reprobridge_sdk.agent.imports`, local modules followed) join the plan's ``imports``
(:func:`with_step_imports`) and the Builder's environment is built again with them. They
are optional there (``optional`` says it is the step's import): the launcher does not need
them, so a module no index has (or that does not import) is left out with B023 instead of
failing the launcher's environment; the step then fails and is B057 as above.
"""

from __future__ import annotations

import ast
import posixpath
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from reprobridge_sdk.agent.commands import output_file
from reprobridge_sdk.agent.fixes import Failure, Fix
from reprobridge_sdk.agent.gates import build_finding
from reprobridge_sdk.agent.imports import closure
from reprobridge_sdk.agent.intake import PyFile, options_of, read_tree, readme_commands
from reprobridge_sdk.model.build import (
    BuildFinding,
    CommandLine,
    LauncherPlan,
    PlanRecord,
    PrepareStep,
    ReachedImport,
)
from reprobridge_sdk.model.guide import Ambiguity

__all__ = [
    "MAX_STEPS",
    "SHORTEST_SIZES",
    "SIZE_OPTIONS",
    "compose",
    "cycle",
    "decision",
    "find_step",
    "gate",
    "missing_path",
    "prerequisite_fix",
    "shorter_step",
    "step_imports",
    "with_step_imports",
]

#: Steps a launcher runs first, at most.
MAX_STEPS = 3
#: Option names (without dashes) that size what a step makes, and the smoke run's value.
SIZE_OPTIONS = {
    "num_train": "100",
    "n_train": "100",
    "num_valid": "20",
    "num_val": "20",
    "num_test": "20",
    "n_test": "20",
    "num_samples": "100",
    "n_samples": "100",
    "num_examples": "100",
    "number_walks": "2",
    "num_walks": "2",
}
#: A step's size options at their smallest, for a smoke run with the step that still runs past
#: its budget (the smoke-scope rule): one walk from each node, ten nodes long.
SHORTEST_SIZES = {
    "number_walks": "1",
    "num_walks": "1",
    "walk_length": "10",
    "path_length": "10",
}
_NO_MODULE = re.compile(r"^No module named '([A-Za-z_]\w*)")
_CONVERSION = re.compile(r"%[-#0 +]*\d*(?:\.\d+)?[sdifrxg]")
_MISSING = re.compile(r"No such file or directory: '(?P<path>[^']+)'")
_SAFE = re.compile(r"^[A-Za-z0-9._+@%=,/-]+$")
_WRITERS = {
    "save",
    "savez",
    "savez_compressed",
    "savetxt",
    "to_csv",
    "to_pickle",
    "to_parquet",
    "to_json",
    "to_hdf",
    "save_word2vec_format",
    "write_text",
    "write_bytes",
    "imwrite",
    "imsave",
}
#: A Python 2 source's writes, line by line: a writer's or ``open(..., "w")``'s literal start.
_PY2_WRITE = re.compile(
    r"""\.(?:""" + "|".join(sorted(_WRITERS)) + r""")\s*\(\s*(?P<q>['"])(?P<lead>[^'"\n]*)(?P=q)"""
    r"""|\bopen\s*\(\s*(?P<o>['"])(?P<opened>[^'"\n]*)(?P=o)\s*,\s*['"][wax]"""
)


def missing_path(failure: Failure) -> str | None:
    """The path a ``FileNotFoundError`` (or ``IOError``) names, if any (not one of ``~``)."""
    if failure.type not in {"FileNotFoundError", "IOError", "OSError"}:
        return None
    match = _MISSING.search(failure.message)
    if match is None or match.group("path").startswith("~"):
        return None
    return match.group("path")


def _relative(missing: str, root: Path, workdir: str) -> str | None:
    """``missing`` relative to ``workdir``: an absolute path only when it lies in ``root``
    (code that builds its paths from ``__file__``)."""
    if not missing.startswith("/"):
        return missing
    for base in (root, root.resolve()):
        try:
            rel = Path(posixpath.normpath(missing)).relative_to(base)
        except ValueError:
            continue
        return posixpath.relpath(rel.as_posix() or ".", workdir)
    return None


@dataclass(frozen=True)
class _Write:
    """A path a write call names: its literal start and end (``complete``: all literal)."""

    lead: str
    tail: str
    complete: bool


def _literal(node: ast.expr) -> tuple[str, str, bool]:
    """(literal start, literal end, whole) of a path expression."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, node.value, True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        if left[2] and right[2]:
            return left[0] + right[0], left[0] + right[0], True
        lead = left[0] + right[0] if left[2] else left[0]
        return lead, (left[1] if right[2] and left[2] else "") + right[1], False
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):  # "x_%s.npy" % name
        text = _literal(node.left)[0]
        return text.split("%", 1)[0], _CONVERSION.split(text)[-1], False
    if isinstance(node, ast.JoinedStr):
        parts = node.values
        first = parts[0] if parts and isinstance(parts[0], ast.Constant) else None
        last = parts[-1] if len(parts) > 1 and isinstance(parts[-1], ast.Constant) else None
        return str(first.value) if first else "", str(last.value) if last else "", False
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "format":  # "x_{}.npy".format(name)
            text = _literal(node.func.value)[0]
            return text.split("{", 1)[0], text.rsplit("}", 1)[-1], False
        if node.func.attr == "join" and node.args:  # os.path.join("data", "x_" + name)
            pieces = [_literal(arg) for arg in node.args]
            lead_parts: list[str] = []
            for lead, _, whole in pieces:
                lead_parts.append(lead)
                if not whole:
                    break
            whole = all(p[2] for p in pieces)
            return "/".join(lead_parts), pieces[-1][1], whole
    return "", "", False


def _target(call: ast.Call) -> ast.expr | None:
    """The path argument of a write call, or None when ``call`` writes nothing."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name == "open" and call.args:
        mode = call.args[1] if len(call.args) > 1 else None
        for keyword in call.keywords:
            mode = keyword.value if keyword.arg == "mode" else mode
        if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
            return call.args[0] if set(mode.value) & set("wax") else None
        return None
    if name not in _WRITERS:
        return None
    if name in {"write_text", "write_bytes"} and isinstance(func, ast.Attribute):
        inner = func.value  # Path("x.npy").write_text(...)
        return inner.args[0] if isinstance(inner, ast.Call) and inner.args else None
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg in {"file", "path", "fname"}), None)


def _writes(file: PyFile) -> list[_Write]:
    """The paths the writes of ``file`` name (a Python 2 source: line by line, literals)."""
    found: list[_Write] = []
    if file.tree is None:
        for match in _PY2_WRITE.finditer(file.text):
            found.append(_Write(match.group("lead") or match.group("opened") or "", "", False))
        return found
    for node in ast.walk(file.tree):
        if isinstance(node, ast.Call) and (target := _target(node)) is not None:
            lead, tail, whole = _literal(target)
            if lead or whole:
                found.append(_Write(lead, tail, whole))
    return found


def _writes_path(write: _Write, cwd: str, path: str) -> bool:
    """Whether ``write``, run from ``cwd``, writes ``path`` (both from the repository root)."""
    joined = posixpath.normpath(posixpath.join(cwd, write.lead)) if write.lead else ""
    if write.complete:
        return joined == path
    if write.lead.endswith("/") or not joined:
        return False
    name = posixpath.basename(path)
    stem = posixpath.basename(joined)
    if posixpath.dirname(joined) != posixpath.dirname(path) or len(stem) < 3:
        return False
    return name.startswith(stem) and name.endswith(write.tail)


def _file_writes(tree_files: dict[str, PyFile], script: str, cwd: str, path: str) -> bool:
    file = tree_files.get(script)
    return file is not None and any(_writes_path(w, cwd, path) for w in _writes(file))


def cycle(root: Path, launcher: LauncherPlan, path: str) -> bool:
    """Whether the launcher's own script writes ``path`` (from the repository root): a step
    that needs it cannot run before the launcher."""
    try:
        text = (root / launcher.script).read_bytes().decode("utf-8", "replace")
        parsed: ast.Module | None = ast.parse(text)
    except (OSError, SyntaxError, ValueError, RecursionError):
        return False
    file = PyFile(launcher.script, text, parsed, python2=False)
    return _file_writes({file.path: file}, launcher.script, launcher.workdir, path)


def _outside(word: str, workdir: str) -> bool:
    value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
    if value.startswith(("/", "~")):
        return True
    moved = posixpath.normpath(posixpath.join(workdir, value))
    return moved == ".." or moved.startswith("../")


_SETUP_PY = "it runs setup.py: packaging, not a step of the experiment"


def _refusal(line: CommandLine) -> str | None:
    """Why the README command ``line`` is never run as a step (None: it may be)."""
    if line.shell:
        return "only a shell can run it as written (a pipe, a redirection or another program)"
    if line.script is not None and posixpath.basename(line.script) == "setup.py":
        return _SETUP_PY
    args = line.argv[3:] if line.console_script else line.argv[1:]
    if any(_outside(word, line.workdir) for word in [*args, *line.env.values()]):
        return "an argument or a variable names a path outside the repository"
    if any("{" in word or "}" in word for word in args):
        return "an argument holds a template brace"
    return None


_SHELL_WRITES = "the shell writes its output to the file: only a shell can run it as written"


def _prints_to(line: CommandLine, path: str) -> bool:
    """Whether ``line`` sends its output to ``path`` (``python gen.py > data/x.txt``)."""
    target = output_file(line.text)
    return target is not None and posixpath.normpath(posixpath.join(line.workdir, target)) == path


def _names(line: CommandLine, path: str) -> bool:
    """Whether ``line`` passes ``path`` (from the repository root) as an argument."""
    for word in line.argv[1:]:
        value = word.split("=", 1)[1] if word.startswith("--") and "=" in word else word
        if value and posixpath.normpath(posixpath.join(line.workdir, value)) == path:
            return True
    return False


def _line_writes(line: CommandLine, files: dict[str, PyFile], path: str) -> bool:
    """Whether the script of ``line`` writes ``path``; a shell line's script may run in its
    own folder (the line's ``cd``), so that folder counts too."""
    assert line.script is not None
    folders = {line.workdir, *([posixpath.dirname(line.script) or "."] if line.shell else [])}
    return any(_file_writes(files, line.script, folder, path) for folder in folders)


def _score(line: CommandLine, path: str) -> int:
    name = posixpath.basename(path)
    values = [w for w in line.argv[1:] if not w.startswith("-") and len(w) > 1]
    return sum(1 for value in values if value in name)


def _smoke_argv(argv: list[str], text: str) -> list[str]:
    """``argv`` with the size options its script declares set small (never larger)."""
    return _sized(argv, text, SIZE_OPTIONS)[0]


def _sized(argv: list[str], text: str, table: dict[str, str]) -> tuple[list[str], list[str]]:
    """``argv`` with the options of ``table`` its script declares set to the table's value
    (never larger), and the ``flag value`` pairs that changed."""
    out, changed = list(argv), []
    for option in options_of(text):
        flags = [f for f in option.flags if f.startswith("--")]
        small = next((table[n] for f in flags if (n := _name(f)) in table), None)
        if small is None:
            continue
        smaller = _smaller(out, flags, small, option.default)
        if smaller != out:
            changed.append(f"{flags[0]} {small}")
        out = smaller
    return out, changed


def shorter_step(
    step: PrepareStep, text: str, counts: tuple[tuple[str, str, str | None], ...] = ()
) -> tuple[PrepareStep, list[str]]:
    """``step`` whose smoke argv passes the size options its script ``text`` declares at their
    smallest (:data:`SHORTEST_SIZES`) and each iteration count of ``counts`` (flag, small
    value, default) small, never larger than given; with the ``flag value`` pairs that
    changed (none: ``step`` itself). Its scored argv is left as written."""
    argv, changed = _sized(list(step.smoke_argv), text, SHORTEST_SIZES)
    for flag, small, default in counts:
        smaller = _smaller(argv, [flag], small, default)
        if smaller != argv:
            changed.append(f"{flag} {small}")
        argv = smaller
    if not changed:
        return step, []
    return step.model_copy(update={"smoke_argv": argv}), changed


def _name(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _smaller(argv: list[str], flags: list[str], small: str, default: str | None) -> list[str]:
    for index, word in enumerate(argv):
        for flag in flags:
            if word == flag and index + 1 < len(argv):
                given = argv[index + 1]
                keep = given.isdigit() and int(given) <= int(small)
                return argv if keep else [*argv[: index + 1], small, *argv[index + 2 :]]
            if word.startswith(f"{flag}="):
                given = word.split("=", 1)[1]
                keep = given.isdigit() and int(given) <= int(small)
                return argv if keep else [*argv[:index], f"{flag}={small}", *argv[index + 1 :]]
    if default is not None and default.isdigit() and int(default) <= int(small):
        return argv
    return [*argv, flags[0], small]


def _not_adopted(path: str, why: str) -> BuildFinding:
    return build_finding(
        "B056",
        f"the step that would write {path!r} is not run first: {why}",
        hint="run the step by hand, or give the claim a hints.command that runs it first",
    )


def _step(line: CommandLine, path: str, files: dict[str, PyFile]) -> PrepareStep:
    assert line.script is not None
    text = files[line.script].text if line.script in files else ""
    return PrepareStep(
        argv=list(line.argv),
        smoke_argv=_smoke_argv(list(line.argv), text),
        workdir=line.workdir,
        env=dict(line.env),
        script=line.script,
        source=line.source,
        produces=path,
        console_script=line.console_script,
    )


def find_step(
    root: Path, missing: str, launcher: LauncherPlan
) -> PrepareStep | BuildFinding | None:
    """The step that writes ``missing`` (relative to the launcher's working directory) in the
    repository at ``root``; a B056 finding when one is found but never adopted; None when
    none is found."""
    path = posixpath.normpath(posixpath.join(launcher.workdir, missing))
    if path == ".." or path.startswith("../"):
        return _not_adopted(missing, "the path leaves the repository")
    if not _SAFE.match(missing) or missing.startswith("-"):
        return _not_adopted(missing[:200], "the path holds characters a shell would read")
    tree = read_tree(root)
    files = {f.path: f for f in tree.python}
    lines = [c for c in readme_commands(tree) if c.problem is None and c.script is not None]
    writers = [
        c for c in lines if _names(c, path) or _line_writes(c, files, path) or _prints_to(c, path)
    ]
    writers.sort(key=lambda c: -_score(c, path))  # stable: README order among equals
    candidates: list[PrepareStep | str] = []
    for line in writers:
        why = _SHELL_WRITES if _prints_to(line, path) else _refusal(line)
        candidates.append(why if why is not None else _step(line, path, files))
    if not candidates:
        for file in tree.python:
            for write in _writes(file):
                lead_dir = posixpath.dirname(write.lead)
                lead_dir = posixpath.normpath(lead_dir) if lead_dir else ""
                folder = posixpath.dirname(path)
                if lead_dir and not (folder == lead_dir or folder.endswith("/" + lead_dir)):
                    continue
                cwd = folder[: len(folder) - len(lead_dir)].rstrip("/") or "."
                if not _writes_path(write, cwd, path):
                    continue
                if posixpath.basename(file.path) == "setup.py":
                    candidates.append(_SETUP_PY)  # a README's 'python setup.py build' too
                    break
                argv = ["python", posixpath.relpath(file.path, cwd)]
                candidates.append(
                    PrepareStep(
                        argv=argv,
                        smoke_argv=_smoke_argv(argv, file.text),
                        workdir=cwd,
                        script=file.path,
                        source=file.path,
                        produces=path,
                    )
                )
                break
    if not candidates:
        return None
    # the launcher's own script last: another writer comes first, else it is the cycle
    candidates.sort(key=lambda c: not isinstance(c, str) and c.script == launcher.script)
    chosen = candidates[0]
    if isinstance(chosen, str):
        return _not_adopted(path, chosen)
    if chosen.script == launcher.script:
        return _not_adopted(path, f"{chosen.script} is the launcher's own script (a cycle)")
    if any(s.script == chosen.script and s.argv == chosen.argv for s in launcher.prepare):
        return _not_adopted(path, f"the launcher already runs {chosen.script} first")
    if len(launcher.prepare) >= MAX_STEPS:
        return _not_adopted(path, f"the launcher runs {MAX_STEPS} steps first already")
    return chosen


def prerequisite_fix(
    failure: Failure, root: Path, launcher: LauncherPlan, refused: list[BuildFinding]
) -> Fix | None:
    """The fix that runs the step writing the file ``failure`` misses before ``launcher``;
    None when there is none (a step found but not adopted adds its B056 to ``refused``)."""
    given = missing_path(failure)
    missing = _relative(given, root, launcher.workdir) if given is not None else None
    if missing is None:
        return None
    found = find_step(root, missing, launcher)
    if isinstance(found, BuildFinding):
        if found not in refused:
            refused.append(found)
        return None
    if found is None:
        return None
    return Fix(
        rule="prerequisite",
        kind="convenience",
        summary=f"{found.script} runs first: it writes {found.produces}",
        prepare=(*launcher.prepare, found),
    )


def gate(
    steps: tuple[PrepareStep, ...],
    trial: LauncherPlan,
    before: Failure,
    after: Failure | None,
    root: Path,
    *,
    fixable: bool = False,
    failed: bool = False,
) -> BuildFinding | None:
    """Why the launcher ``trial`` (with ``steps`` first) does not keep its new step: B057 when
    the step fails (and no fix rule mends its failure: ``fixable``) or does not write the
    file ``before`` missed, B056 when it misses a file the launcher's own script writes (a
    cycle); None when the step is kept (a fixable failure of the step is the next round's).
    ``failed``: the run failed; without a traceback nothing says the step did its part."""
    step = steps[-1]
    if after is None and failed:
        return build_finding(
            "B057",
            f"with {step.script} run first to write {step.produces!r}, the launcher fails "
            "without a traceback; the step is not kept",
            hint="run the step by hand; give a hints.command that runs it first if it works",
        )
    if after is None:
        return None
    if after.same_error(before):
        return build_finding(
            "B057",
            f"{step.script} ran first but {step.produces!r} is still missing; it is not kept",
            hint="find the command that writes the file, or give a hints.command that runs it",
        )
    ran = {file for file, _ in after.frames}
    if trial.script in ran or not ran & {s.script for s in steps}:
        return None
    missing = missing_path(after)
    if missing is not None:
        wanted = posixpath.normpath(posixpath.join(step.workdir, missing))
        if cycle(root, trial, wanted):
            return _not_adopted(
                step.produces,
                f"{step.script} needs {wanted!r}, which {trial.script} writes (a cycle)",
            )
    if fixable:
        return None
    importing = after.type in {"ModuleNotFoundError", "ImportError"}
    lacking = _NO_MODULE.match(after.message) if importing else None
    if lacking is not None and not _in_repository(root, step, lacking.group(1)):
        name = lacking.group(1)
        return build_finding(
            "B057",
            f"the step {step.script}, run first to write {step.produces!r}, imports {name!r}, "
            "which the environment lacks (its requirement was left out: it did not resolve "
            "with the launcher's, or its distribution has another name); it is not kept",
            hint=f"add the distribution that provides {name!r} to the claims file's "
            "requirements, then run 'reprobridge build --resume'",
        )
    return build_finding(
        "B057",
        f"the step {step.script}, run first to write {step.produces!r}, fails with "
        f"{after.signature}; it is not kept",
        hint="fix the step by hand and record it with 'reprobridge code record'",
    )


def step_imports(root: Path, step: PrepareStep) -> list[ReachedImport]:
    """The third-party modules ``step``'s script reaches in the repository at ``root``, each
    optional (the step's import, not the launcher's), sorted by module."""
    module = step.console_script is not None or step.argv[1:2] == ["-m"]
    reached = closure(root, step.script, workdir=step.workdir, module=module)
    why = f"imported by the step {step.script}, run first to write {step.produces}"
    return [
        ReachedImport(
            module=name,
            files=list(use.files),
            optional=f"{use.optional}; {why}" if use.optional else why,
        )
        for name, use in sorted(reached.third_party.items())
    ]


def with_step_imports(plan: PlanRecord, root: Path, steps: list[PrepareStep]) -> PlanRecord:
    """``plan`` whose ``imports`` also hold the modules ``steps`` reach that it lacks (the
    plan itself when there are none); a module the launchers import keeps their entry."""
    imports = {use.module: use for use in plan.imports}
    for step in steps:
        for use in step_imports(root, step):
            imports.setdefault(use.module, use)
    if len(imports) == len(plan.imports):
        return plan
    return plan.model_copy(update={"imports": sorted(imports.values(), key=lambda u: u.module)})


def _in_repository(root: Path, step: PrepareStep, name: str) -> bool:
    """Whether the top-level module ``name`` is one of the repository's (beside the step's
    script, at the root or under ``src/``)."""
    folders = {posixpath.dirname(step.script) or ".", step.workdir, ".", "src"}
    return any(
        (root / folder / f"{name}.py").is_file() or (root / folder / name).is_dir()
        for folder in folders
    )


def _step_line(step: PrepareStep, argv: list[str], workdir: str) -> str:
    words = [f"{name}={shlex.quote(value)}" for name, value in sorted(step.env.items())]
    line = " ".join([*words, shlex.join(argv)])
    where = posixpath.relpath(step.workdir, workdir)
    return line if where == "." else f"(cd {shlex.quote(where)} && {line})"


def compose(launcher: LauncherPlan) -> tuple[list[str], bool]:
    """The launcher's argv and ``shell`` with its steps first: ``[line]`` and True when it has
    steps (a smoke launcher's take their ``smoke_argv``), else its own."""
    if not launcher.prepare:
        return list(launcher.argv), launcher.shell
    parts = [
        _step_line(s, s.smoke_argv if launcher.scope == "smoke" else s.argv, launcher.workdir)
        for s in launcher.prepare
    ]
    main = launcher.argv[0] if launcher.shell else shlex.join(launcher.argv)
    return [" && ".join([*parts, main])], True


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower())[:64].strip("-") or "step"


def decision(step: PrepareStep, launcher: LauncherPlan, tasks: list[str]) -> Ambiguity:
    """The guide record of a kept step: the command, where it comes from, and why one line."""
    smoke = _step_line(step, step.smoke_argv, step.workdir)
    scored = _step_line(step, step.argv, step.workdir)
    where = "the repository root" if step.workdir == "." else f"{step.workdir}/"
    sizes = "" if smoke == scored else f"; the smoke launcher's step runs `{smoke}`"
    if step.console_script is not None:
        sizes += (
            f"; {step.console_script} is the console script of the repository's package, run "
            f"as `{shlex.join(step.argv[:3])}` without installing the package"
        )
    return Ambiguity(
        id=_slug(
            f"{posixpath.splitext(posixpath.basename(launcher.script))[0]}-needs-"
            f"{posixpath.basename(step.produces)}"
        ),
        source=step.source,
        gap=(
            f"{launcher.script} reads {step.produces}, which the repository does not hold; "
            f"`{scored}` (in {where}, from {step.source}) writes it"
        ),
        resolution=(
            f"the launchers of {launcher.script} run that step first, in the same run (one "
            "shell line, step && launcher): every sandboxed run works on a copy of the code "
            "of its own, so a separate launcher's file would not reach it; the scored "
            f"launcher's step is the command as written{sizes}"
        ),
        sensitivity="medium",
        tasks=sorted(tasks),
    )

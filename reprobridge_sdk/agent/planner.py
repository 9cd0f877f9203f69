"""Planner: each claim gets a candidate launcher (smoke and scored), or a reason why not.

Rules, in order of precedence, for the script that produces a claim:

1. ``hints.command``: read as a launcher (:mod:`reprobridge_sdk.agent.commands`): its
   working directory (``cd``), variables, ``python -m`` or script and arguments; a command
   whose script is not in its folder runs where a README ``cd``s to run it, or in the one
   folder that holds it. A command the Intake reported unusable (B022) is skipped.
2. ``hints.script``, when the repository has it (else B002 and the next rules): that
   script, with the README's command for it if there is one.
3. The entry points whose printed text contains the claim's label (``hints.label``), then
   those whose printed text shares the most words with ``measured``. Two or more scripts
   equally good are an ambiguity: the first in path order is taken and a guide record
   says so (sensitivity high: the wrong script gives a wrong number).
4. A repository with a single entry point: that one.
5. Otherwise the claim is unplanned (B004, a warning) and the plan says why. When no claim is
   planned at all, the Planner's gate fails (B049): there is nothing to build.

A notebook (``.ipynb``: a hint's ``script``, one a hint's ``command`` names, or an entry
point Intake read from a notebook's code cells) is run as the script made from it
(:mod:`reprobridge_sdk.agent.notebooks`): ``x_notebook.py`` beside it (the next free name
when that exists, B051), in the notebook's folder unless a command names another, with its
cells' last expressions printed only when the notebook's own prints do not show the claim.
The plan records it (``notebooks``); the Reproducer writes it into the refined code as a
convenience patch. IPython-only lines commented out are B051 (a warning); a notebook that
cannot be read or runs nothing is B050 (a warning), and the claim is planned again without
its ``script`` and ``command`` hints.

Then, for the chosen script:

* **Arguments.** The README's command for the script, when there is one, is followed. Where
  it passes an option whose argparse default differs, that is an ambiguity record (the
  README is followed: it is what the authors ran).
* **Console scripts.** A command that runs a console script of the repository's own package
  (``deepwalk --input ...``) was read by the Intake as the Python command that runs it
  uninstalled (``python -m module``, or the installed wrapper's ``python -c`` call): it is
  followed like any other, its module's folder made importable as below.
* **Files another step writes.** The Planner does not run a README's earlier steps up front:
  only a smoke run that stops on a missing file makes the Reproducer put the step that writes
  it before the launcher (:mod:`reprobridge_sdk.agent.prerequisite`).
* **Working directory and variables.** Those of the command the launcher follows (the
  hint's or the README's). Without one: the repository root, unless a relative data path the
  script reads exists only relative to the script's own directory; then that directory (cwd
  assumption). A command only a shell can run is a shell launcher (one line, ``shell``):
  no seed or smoke option is added to it.
* **The repository's own modules.** The script's import closure
  (:mod:`reprobridge_sdk.agent.imports`) gives the Builder its modules (``imports``). A
  module of the repository that only the repository root (or ``src/``) makes importable puts
  that folder on the launcher's ``PYTHONPATH``, relative to its working directory: a
  convenience change without a patch (``conveniences``), the code untouched. ``PYTHONPATH``
  rather than an editable install: the environment is shared by every artifact with the
  same lock, and must not point into one checkout. A package so imported is not installed:
  code that reads its own distribution's metadata (``importlib.metadata.version(__name__)``)
  fails at the smoke run, and the Reproducer's fix rule ``own-distribution-metadata``
  (:mod:`reprobridge_sdk.agent.own_distribution`) writes the metadata-only ``.dist-info``
  then; the Planner writes nothing.
* **Seeds.** An option whose flag contains ``seed`` is the seed flag: both launchers pass
  ``{seed}`` through it.
  - A claim over several seeds (two or more distinct ``hints.seeds`` and a
    ``hints.statistic``): the scored launcher declares every seed, the task reports
    ``statistic: {aggregate, seeds}`` (so neither R008 nor R009), and each of the five
    reference observations is one *repetition* of all the seeds (``repeats``), valued as the
    auditor values an attempt. The smoke launcher runs the first seed.
  - Otherwise the paper's first seed (default 0). Each reference observation is one run (a
    task statistic over one seed), and the five reference runs repeat that seed
    (``repeats``): they show the number is repeatable, and the interval's floor bounds it.
    Two or more seeds without ``hints.statistic`` are B017 (a warning: the statistic is
    unknown, so the plan is over the first seed).
  - A script that seeds its generators with a constant itself (``seed = 123`` then
    ``np.random.seed(seed)``, read once here and recorded on its launchers as
    ``fixed_seed``) while the claim names no seeds: run as written, every run repeats one
    initialisation, and a published value is most often a mean over initialisations. The
    claim is planned as the mean over five seeds, the constant first (so the smoke run is
    the published command) and the next four after it, pending the Reproducer's seed option
    (which makes the constant read the launcher's seed) as for a claim over several seeds;
    a pitfall says the script fixes its seed.
  A script without a seed flag runs five times unchanged, and a pitfall says its runs are not
  seeded. When the claim names its seeds, the launchers keep them (with no ``seed_flag``:
  the scored launcher every seed of a claim over several seeds, else the first) and the
  Reproducer gives the script a seed option (a convenience change); once that passes its
  gate the Reproducer re-plans a claim over several seeds as above (a recorded decision),
  and without it the claim is B018 (a warning: planned over its first seed). A seed option
  resolves that pitfall.
* **Smoke versus scored.** The smoke launcher is the scored command with one seed and, when
  the script has an option that bounds the work (epochs or an epoch multiplier, iterations,
  steps, estimators, repetitions or splits, a subset), that option set to a small value;
  else it is the scored command itself (recorded as such in the basis).
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from reprobridge_sdk.agent.commands import argparse_flags, with_option
from reprobridge_sdk.agent.convenience import fixed_seed
from reprobridge_sdk.agent.gates import build_finding, gate_from
from reprobridge_sdk.agent.imports import Closure, closure
from reprobridge_sdk.agent.intake import (
    code_date,
    command_script,
    hint_command,
    repository_files,
)
from reprobridge_sdk.agent.notebooks import (
    convert,
    has_code,
    notebook_in_command,
    read_notebook,
    script_name,
)
from reprobridge_sdk.model.build import (
    BuildFinding,
    ClaimPlan,
    CommandLine,
    EntryOption,
    EntryPoint,
    IntakeRecord,
    LauncherPlan,
    NotebookScript,
    PlanRecord,
    ReachedImport,
)
from reprobridge_sdk.model.claims import Claim, Claims
from reprobridge_sdk.model.guide import Ambiguity, Change, Pitfall

__all__ = [
    "DEFAULT_SEEDS",
    "REFERENCE_RUNS",
    "SMOKE_OPTIONS",
    "fixed_seed_pitfall_id",
    "plan",
    "seeds_decision_id",
    "unseeded_pitfall_id",
]

#: The seed of the launchers when the claims file names none.
DEFAULT_SEEDS = (0,)
#: Runs behind the reference observations of each claim.
REFERENCE_RUNS = 5
#: Option names (without dashes) that bound the work, and the value a smoke run uses.
SMOKE_OPTIONS = {
    **dict.fromkeys(("epochs", "n_epochs", "num_epochs", "max_epochs", "nb_epoch", "epochx"), "1"),
    **dict.fromkeys(
        ("max_iter", "iterations", "n_iter", "n_iters", "niter", "num_iters", "iters"), "5"
    ),
    **dict.fromkeys(("steps", "max_steps", "num_steps", "train_steps"), "5"),
    **dict.fromkeys(("n_estimators", "n_est"), "5"),
    # repetitions of the whole experiment: one is enough to see it run (splits need two)
    **dict.fromkeys(("reps", "n_runs", "num_runs", "runs", "n_trials", "trials"), "1"),
    "n_splits": "2",
    "subset": "100",
}
_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"the", "of", "a", "an", "on", "in", "for", "and", "with", "to", "by", "at", "test"}


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return (slug or "run")[:40]


def seeds_decision_id(claim: str) -> str:
    """The id of the decision that re-plans ``claim`` over every seed after a seed option."""
    return _slug(f"{claim}-over-seeds")


def _flags(root: Path | None, choice: _Choice) -> frozenset[str]:
    """The long options of the script's argparse parsers (:func:`argparse_flags`)."""
    if root is None or choice.shell or choice.notebook is not None:
        return frozenset()
    try:
        return argparse_flags((root / choice.script).read_text("utf-8", errors="replace"))
    except OSError:
        return frozenset()


def _fixed_seed(root: Path | None, choice: _Choice) -> int | None:
    """The constant the chosen script seeds itself with (read once, for the plan), or None."""
    if root is None or choice.shell or choice.notebook is not None:
        return None
    try:
        return fixed_seed((root / choice.script).read_text("utf-8", errors="replace"))
    except OSError:
        return None


def _seed_pitfall(script: str, fixed: int | None, base: str, claim: str) -> Pitfall:
    """The pitfall of a script that takes no seed: its runs are not repeatable, or, when it
    seeds itself with the constant ``fixed``, they all repeat that one initialisation."""
    if fixed is None:
        return Pitfall(
            id=unseeded_pitfall_id(f"{base}-scored"),
            summary=f"{script} takes no seed: its runs are not repeatable",
            remedy="compare values against the compatibility interval of repeated runs, not "
            "against one run",
            tasks=[claim],
        )
    return Pitfall(
        id=fixed_seed_pitfall_id(f"{base}-scored"),
        summary=f"{script} seeds its generators with the constant {fixed} and takes no seed: "
        "every run repeats one initialisation",
        remedy="the reference runs show no spread over seeds unless the seed varies: the "
        "build makes the constant read the launcher's seed (a recorded convenience change) "
        "and takes its references over several seeds",
        tasks=[claim],
    )


def fixed_seed_pitfall_id(scored: str) -> str:
    """The id of the pitfall "fixes its own seed" of the script of the scored launcher."""
    return _slug(f"{scored.removesuffix('-scored')}-fixed-seed")


def unseeded_pitfall_id(scored: str) -> str:
    """The id of the pitfall "takes no seed" of the script of the scored launcher ``scored``."""
    return _slug(f"{scored.removesuffix('-scored')}-unseeded")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1}


def _option_name(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _seed_option(entry: EntryPoint | None) -> EntryOption | None:
    if entry is None:
        return None
    for option in entry.options:
        if any("seed" in _option_name(f) for f in option.flags if f.startswith("-")):
            return option
    return None


def _long_flag(option: EntryOption) -> str:
    flags = [f for f in option.flags if f.startswith("--")] or option.flags
    return flags[0]


#: Planned launchers are shared by claims with the same script, arguments, folder, seeds,
#: variables and command head.
_Key = tuple[
    str, tuple[str, ...], str, tuple[int, ...], tuple[tuple[str, str], ...], tuple[str, ...]
]


@dataclass
class _Choice:
    script: str
    args: list[str]
    basis: str
    #: From a command read as a launcher: its folder, variables and argv up to the arguments.
    workdir: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    head: list[str] | None = None
    shell: bool = False
    #: The notebook the (generated) script is made from.
    notebook: str | None = None


def _from_line(line: CommandLine, basis: str) -> _Choice:
    """A choice that follows a command read as a launcher."""
    assert line.script is not None
    if line.shell:
        return _Choice(line.script, [], basis, line.workdir, dict(line.env), list(line.argv), True)
    args = _after_program(line)
    head = line.argv[: len(line.argv) - len(args)]
    return _Choice(line.script, args, basis, line.workdir, dict(line.env), head)


def _after_program(line: CommandLine) -> list[str]:
    """The arguments after the script or the ``-m`` module of ``line``."""
    if line.console_script is not None:
        return line.argv[3:]  # after ``python -m module`` or ``python -c code``
    skip = False
    for index, word in enumerate(line.argv[1:], start=1):
        if skip:
            skip = False
        elif line.module is not None and word == "-m":
            return line.argv[index + 2 :]
        elif word in {"-W", "-X"}:
            skip = True
        elif line.module is None and not word.startswith("-"):
            return line.argv[index + 1 :]
    return []


def _readme_line(intake: IntakeRecord, script: str) -> CommandLine | None:
    for line in intake.commands:
        if line.script == script and line.problem is None:
            return line
    return None


def _split(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _args_after_script(command: str, script: str) -> list[str]:
    words = _split(command)
    for index, word in enumerate(words):
        if word.removeprefix("./") == script or (
            word == "-m" and index + 1 < len(words) and command_script(command) == script
        ):
            skip = 2 if word == "-m" else 1
            return words[index + skip :]
    return []


def _choose(
    claim: Claim, intake: IntakeRecord, ambiguities: list[Ambiguity], root: Path | None
) -> _Choice | str:
    entries = {entry.path: entry for entry in intake.entry_points}
    hints = claim.hints
    named = notebook_in_command(hints.command) if hints.command else None
    if named is not None:
        return _Choice(named, [], "hint: command (a notebook)")
    if hints.command and root is not None:
        files = [rel for rel in repository_files(root) if rel.endswith(".py")]
        line, how = hint_command(hints.command, root, list(intake.commands), files)
        if line.problem is None and line.script is not None:
            basis = "hint: command" + ("" if how == "as written" else f" ({how})")
            return _from_line(line, basis)
    elif hints.command:
        script = command_script(hints.command)
        if script:
            return _Choice(script, _args_after_script(hints.command, script), "hint: command")
    script = (hints.script or "").removeprefix("./")
    if script and (root is None or (root / script).is_file()):
        given = _readme_line(intake, script)
        if given is not None and not given.shell:
            return _from_line(given, "hint: script with its README command")
        return _Choice(script, [], "hint: script")
    if not entries:
        return "the repository has no entry point (no __main__ block, argparse or README command)"
    candidates: list[tuple[int, str]] = []
    label = (hints.label or "").lower()
    wanted = _words(claim.measured)
    for path, entry in sorted(entries.items()):
        printed = " ".join(entry.prints).lower()
        score = 0
        if label and label in printed:
            score = 1000
        score += len(wanted & _words(printed))
        if score:
            candidates.append((score, path))
    if candidates:
        best = max(score for score, _ in candidates)
        top = sorted(path for score, path in candidates if score == best)
        chosen = top[0]
        if len(top) > 1:
            ambiguities.append(
                Ambiguity(
                    id=_slug(f"{claim.id}-script"),
                    source=", ".join(top),
                    gap=f"{len(top)} scripts print text that matches claim {claim.id!r}",
                    resolution=f"{chosen} is used (first in path order); the others were not run",
                    sensitivity="high",
                    tasks=[claim.id],
                )
            )
        how = "label" if best >= 1000 else "words of 'measured'"
        basis = f"printed text matches the claim's {how}"
        found = _readme_line(intake, chosen)
        if found is not None and not found.shell:
            return _from_line(found, basis)
        return _Choice(chosen, [], basis)
    if len(entries) == 1:
        only = next(iter(entries))
        found = _readme_line(intake, only)
        if found is not None and not found.shell:
            return _from_line(found, "only entry point")
        return _Choice(only, [], "only entry point")
    return (
        f"{len(entries)} entry points and none prints text that matches the claim; "
        "give hints.script, hints.command or hints.label"
    )


def _readme_disagreements(
    claim: Claim, choice: _Choice, entry: EntryPoint | None, ambiguities: list[Ambiguity]
) -> None:
    if entry is None or not choice.args:
        return
    given: dict[str, str] = {}
    args = choice.args
    for index, word in enumerate(args):
        if word.startswith("--") and "=" in word:
            name, _, value = word.partition("=")
            given[_option_name(name)] = value
        elif word.startswith("-") and index + 1 < len(args) and not args[index + 1].startswith("-"):
            given[_option_name(word)] = args[index + 1]
    for option in entry.options:
        for flag in option.flags:
            name = _option_name(flag)
            if name in given and option.default is not None:
                default = option.default.strip("'\"")
                if default != given[name]:
                    ambiguities.append(
                        Ambiguity(
                            id=_slug(f"{claim.id}-{name}"),
                            source=f"{choice.script} (argparse) and the README",
                            gap=(
                                f"{flag} defaults to {option.default} in the code but the "
                                f"command passes {given[name]}"
                            ),
                            resolution="the command's value is used: it is what the authors ran",
                            sensitivity="medium",
                            tasks=[claim.id],
                        )
                    )
                break


def _workdir(root: Path | None, script: str, intake: IntakeRecord) -> str:
    if root is None:
        return "."
    folder = PurePosixPath(script).parent
    if str(folder) == ".":
        return "."
    for ref in intake.data:
        if ref.kind != "path" or ref.where is None or ref.where.file != script:
            continue
        value = ref.value
        if value.startswith("/"):
            continue
        if not (root / value).exists() and (root / folder / value).exists():
            return str(folder)
    return "."


def _reach(  # noqa: PLR0917 - private helper of plan()
    root: Path,
    choice: _Choice,
    workdir: str,
    env: dict[str, str],
    claim: str,
    conveniences: dict[str, Change],
    imports: dict[str, ReachedImport],
) -> Closure:
    """The import closure of the chosen script; its rooted modules made importable.

    A local module found only from the repository root (or ``src/``) is put on the
    launcher's ``PYTHONPATH`` (relative to its working directory): a recorded convenience
    change without a patch, the code is not touched.
    """
    module = bool(choice.head and {"-m", "-c"} & set(choice.head))  # cwd first on sys.path
    reached = closure(root, choice.notebook or choice.script, workdir=workdir, module=module)
    for name, use in reached.third_party.items():
        known = imports.get(name)
        if known is None or (known.optional is not None and use.optional is None):
            imports[name] = ReachedImport(module=name, files=list(use.files), optional=use.optional)
    if reached.rooted:
        paths = [posixpath.relpath(folder, workdir) for folder in reached.rooted]
        given = env.get("PYTHONPATH")
        env["PYTHONPATH"] = os.pathsep.join([*paths, *([given] if given else [])])
        change_id = _slug(f"{choice.script}-pythonpath")
        modules = ", ".join(reached.rooted_modules)
        where = ", ".join("the repository root" if f == "." else f"{f}/" for f in reached.rooted)
        previous = conveniences.get(change_id)
        conveniences[change_id] = Change(
            id=change_id,
            kind="convenience",
            summary=f"{choice.script} runs with {where} on PYTHONPATH",
            rationale=(
                f"{choice.script} imports {modules}, which is in the repository but not "
                f"beside the script: run as written it stops with ModuleNotFoundError. The "
                f"launchers set PYTHONPATH={env['PYTHONPATH']} (relative to their working "
                "directory, as running it from the root would); the code is unchanged."
            ),
            tasks=sorted({*(previous.tasks if previous else []), claim}),
        )
    return reached


def _shows_claim(claim: Claim, prints: list[str]) -> bool:
    """True when printed text names the claim (its label, or a word of ``measured``)."""
    printed = " ".join(prints).lower()
    label = (claim.hints.label or "").lower()
    return bool((label and label in printed) or _words(claim.measured) & _words(printed))


def _from_notebook(  # noqa: PLR0917 - private helper of plan()
    claim: Claim,
    index: int,
    choice: _Choice,
    root: Path,
    entries: dict[str, EntryPoint],
    notebooks: dict[str, NotebookScript],
    findings: list[BuildFinding],
) -> _Choice | str:
    """The choice of a notebook turned into the script made from it (or why it cannot be).

    The script runs in the notebook's folder (where Jupyter runs it) unless a command said
    otherwise; it prints its cells' last expressions when the notebook's own prints do not
    show the claim. A notebook that cannot be read or runs nothing is B050 (a warning); an
    IPython-only line commented out or a name taken is B051 (a warning).
    """
    notebook = read_notebook(root, choice.script)
    problem = notebook.problem
    display = False
    if problem is None:
        entry = entries.get(notebook.path)
        display = not _shows_claim(claim, entry.prints if entry else [])
        converted = convert(notebook, display=display)
        if not has_code(converted):
            problem = "it has no code to run (its code cells are empty or IPython-only)"
    if problem is not None:
        findings.append(
            build_finding(
                "B050",
                f"claim {claim.id!r}: notebook {notebook.path!r} cannot be run as a script: "
                f"{problem}; the claim is planned without it",
                path=f"/claims/{index}/hints",
                hint="name a script of the repository, or a notebook in nbformat 4 with code",
            )
        )
        return problem
    known = notebooks.get(notebook.path)
    if known is not None:
        notebooks[notebook.path] = known.model_copy(
            update={
                "display": known.display or display,
                "tasks": sorted({*known.tasks, claim.id}),
            }
        )
        script = known.script
    else:
        script = script_name(root, notebook.path)
        plain = f"{notebook.path.removesuffix('.ipynb')}_notebook.py"
        if script != plain:
            findings.append(
                build_finding(
                    "B051",
                    f"notebook {notebook.path!r}: {plain!r} exists; its script is {script!r}",
                    path=f"/claims/{index}/hints",
                    hint="nothing to do: the existing file is left as it is",
                )
            )
        if converted.commented:
            shown = "; ".join(converted.commented[:5])
            findings.append(
                build_finding(
                    "B051",
                    f"notebook {notebook.path!r}: {len(converted.commented)} IPython-only "
                    f"line(s) commented out in {script!r}: {shown}",
                    path=f"/claims/{index}/hints",
                    hint="if one of them matters (a %run, a !command making data), do its work "
                    "in Python and record the change with 'reprobridge code record'",
                )
            )
        notebooks[notebook.path] = NotebookScript(
            notebook=notebook.path,
            script=script,
            display=display,
            commented=converted.commented,
            change=_slug(f"{notebook.path}-script"),
            tasks=[claim.id],
        )
    folder = posixpath.dirname(notebook.path) or "."
    return _Choice(
        script,
        [],
        f"{choice.basis}; a notebook, run as the script made from it",
        workdir=choice.workdir if choice.workdir is not None else folder,
        env=dict(choice.env),
        notebook=notebook.path,
    )


def plan(
    claims: Claims,
    intake: IntakeRecord,
    *,
    root: Path | None = None,
    inputs_digest: str,
    seconds: float = 0.0,
) -> PlanRecord:
    """Plan launchers for every claim; ``root`` is the checkout (for workdir decisions)."""
    entries = {entry.path: entry for entry in intake.entry_points}
    ambiguities: list[Ambiguity] = []
    launchers: dict[_Key, tuple[LauncherPlan, LauncherPlan]] = {}
    claim_plans: list[ClaimPlan] = []
    findings: list[BuildFinding] = []
    used_ids: set[str] = set()
    pitfalls: list[Pitfall] = []
    conveniences: dict[str, Change] = {}
    imports: dict[str, ReachedImport] = {}
    notebooks: dict[str, NotebookScript] = {}
    for index, claim in enumerate(claims.claims):
        without = claim.hints.model_copy(update={"script": None, "command": None})
        for attempt in (claim, claim.model_copy(update={"hints": without})):
            choice = _choose(attempt, intake, ambiguities, root)
            if isinstance(choice, str) or not choice.script.endswith(".ipynb") or root is None:
                break
            choice = _from_notebook(claim, index, choice, root, entries, notebooks, findings)
            if isinstance(choice, _Choice):
                break
        if isinstance(choice, str):
            claim_plans.append(
                ClaimPlan(claim=claim.id, status="unplanned", basis="none", reason=choice)
            )
            findings.append(
                build_finding(
                    "B004",
                    f"claim {claim.id!r} has no launcher: {choice}",
                    path=f"/claims/{index}",
                    hint="add hints.script or hints.command to the claim",
                )
            )
            continue
        entry = entries.get(choice.script)
        _readme_disagreements(claim, choice, entry, ambiguities)
        seed_option = _seed_option(entry)
        given = list(dict.fromkeys(claim.hints.seeds))
        statistic = claim.hints.statistic if len(given) > 1 else None
        if len(given) > 1 and statistic is None:
            findings.append(
                build_finding(
                    "B017",
                    f"claim {claim.id!r} lists {len(given)} seeds but no statistic: "
                    f"planned over seed {given[0]} alone",
                    path=f"/claims/{index}/hints",
                    hint="add hints.statistic (e.g. mean) to plan the statistic over every seed",
                )
            )
        fixed = _fixed_seed(root, choice) if seed_option is None else None
        if fixed is not None and not given:
            # every run of the script repeats one initialisation: the references are taken
            # over seeds, the script's constant the first (its published command)
            given = [fixed + number for number in range(REFERENCE_RUNS)]
            statistic = "mean"
        pending = statistic is not None and seed_option is None
        if pending:
            # every seed is kept for the seed option the Reproducer gives the script; the
            # statistic waits for that change's gate (the Reproducer re-plans, or gives B018)
            statistic = None
        seeds = given if statistic is not None or pending else given[:1] or [DEFAULT_SEEDS[0]]
        workdir = (
            choice.workdir if choice.workdir is not None else _workdir(root, choice.script, intake)
        )
        env = {"MPLBACKEND": "Agg", **choice.env}
        if root is not None:
            _reach(root, choice, workdir, env, claim.id, conveniences, imports)
        key = (
            choice.script,
            tuple(choice.args),
            workdir,
            tuple(seeds),
            tuple(sorted(env.items())),
            tuple(choice.head or ()),
        )
        if choice.shell:
            seed_option = None
        if key not in launchers:
            stem = _slug(PurePosixPath(choice.script).stem)
            base = stem
            number = 2
            while f"{base}-scored" in used_ids:
                base = f"{stem}-{number}"
                number += 1
            used_ids.add(f"{base}-scored")
            script_arg = choice.script
            if workdir != ".":
                script_arg = str(PurePosixPath(choice.script).relative_to(workdir))
            head = choice.head if choice.head is not None else ["python", script_arg]
            scored_args = list(choice.args)
            smoke_args = list(choice.args)
            seed_flag = _long_flag(seed_option) if seed_option else None
            flags = _flags(root, choice)
            if seed_flag:
                scored_args = with_option(scored_args, seed_flag, "{seed}", flags)
                smoke_args = with_option(smoke_args, seed_flag, "{seed}", flags)
            for option in entry.options if entry and not choice.shell else []:
                for flag in option.flags:
                    small = SMOKE_OPTIONS.get(_option_name(flag))
                    if small is not None and flag.startswith("--"):
                        smoke_args = with_option(smoke_args, flag, small, flags)
                        break
            scored = LauncherPlan(
                id=f"{base}-scored",
                script=choice.script,
                argv=[*head, *scored_args],
                workdir=workdir,
                env=env,
                shell=choice.shell,
                scope="scored",
                seed_flag=seed_flag,
                seeds=seeds
                if seed_flag or pending or (claim.hints.seeds and not choice.shell)
                else [],
                fixed_seed=fixed,
                repeats=REFERENCE_RUNS,
            )
            smoke = LauncherPlan(
                id=f"{base}-smoke",
                script=choice.script,
                argv=[*head, *smoke_args],
                workdir=workdir,
                env=env,
                shell=choice.shell,
                scope="smoke",
                seed_flag=seed_flag,
                seeds=seeds[:1]
                if seed_flag or pending or (claim.hints.seeds and not choice.shell)
                else [],
                fixed_seed=fixed,
            )
            launchers[key] = (smoke, scored)
            if not seed_flag:
                pitfalls.append(_seed_pitfall(choice.script, fixed, base, claim.id))
        smoke, scored = launchers[key]
        claim_plans.append(
            ClaimPlan(
                claim=claim.id,
                status="planned",
                smoke=smoke.id,
                scored=scored.id,
                basis=choice.basis,
                statistic=statistic,
            )
        )
    if claims.claims and not launchers:
        findings.append(
            build_finding(
                "B049",
                f"none of the {len(claims.claims)} claim(s) could be planned: "
                "the build has nothing to run",
                hint="give each claim hints.script, hints.command or hints.label",
            )
        )
    flat = [item for pair in launchers.values() for item in pair]
    code = sorted(
        {
            *(item.script for item in flat),
            *(f for r in imports.values() for f in r.files),
            *(n.notebook for n in notebooks.values()),  # a generated script has no history
            # the repository's own pins: set later than the code, they are of a later era
            *(f.path for f in intake.dependency_files),
        }
    )
    return PlanRecord(
        inputs_digest=inputs_digest,
        seconds=seconds,
        gate=gate_from(findings),
        launchers=flat,
        claims=claim_plans,
        ambiguities=_unique(ambiguities),
        pitfalls=pitfalls,
        conveniences=list(conveniences.values()),
        imports=sorted(imports.values(), key=lambda r: r.module),
        code_date=code_date(root, code, intake.python.commit_date) if root is not None else None,
        notebooks=list(notebooks.values()),
    )


def _unique(items: list[Ambiguity]) -> list[Ambiguity]:
    seen: set[str] = set()
    out: list[Ambiguity] = []
    for item in items:
        if item.id in seen:
            continue
        seen.add(item.id)
        out.append(item)
    return out

"""The executor options shared by ``run``, ``validate`` and ``audit --table``."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from reprobridge_sdk.run.executors import ExecutorOptions

__all__ = ["EXECUTOR_CHOICE", "batch_mapper", "executor_options", "options_from_flags"]

F = TypeVar("F", bound=Callable[..., Any])

#: ``--executor``'s choices: the executors of :mod:`reprobridge_sdk.run.executors` (written
#: here so that ``--help`` imports none of them; a test checks that the lists agree).
EXECUTOR_CHOICE = click.Choice(("local", "dask-local", "dask", "slurm"))


def executor_options(function: F) -> F:
    """Add ``--executor``, ``--scheduler``, ``--shared-fs`` and ``--job-extra`` to a command."""
    decorators = [
        click.option(
            "--executor",
            type=EXECUTOR_CHOICE,
            help="Where the work executes (default: local; also REPROBRIDGE_EXECUTOR or "
            "'executor' in the configuration).",
        ),
        click.option(
            "--scheduler",
            envvar="REPROBRIDGE_SCHEDULER",
            help="Address of the Dask scheduler for --executor dask (tcp://HOST:8786).",
        ),
        click.option(
            "--shared-fs/--no-shared-fs",
            "shared_fs",
            default=None,
            envvar="REPROBRIDGE_SHARED_FS",
            help="Whether workers see this file system at the same paths (dask, slurm; "
            "default: no, the artifact and the run directories travel with the tasks).",
        ),
        click.option(
            "--job-extra",
            multiple=True,
            help="An extra #SBATCH directive for --executor slurm (repeatable), "
            "e.g. --partition=cpu.",
        ),
    ]
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


def options_from_flags(
    scheduler: str | None, shared_fs: bool | None, job_extra: tuple[str, ...]
) -> ExecutorOptions:
    from reprobridge_sdk.run.executors import ExecutorOptions  # noqa: PLC0415 - lazy

    return ExecutorOptions(scheduler=scheduler, shared_fs=shared_fs, job_extra=tuple(job_extra))


@contextlib.contextmanager
def batch_mapper(
    name: str | None,
    jobs: int,
    scheduler: str | None,
    shared_fs: bool | None,
    job_extra: tuple[str, ...],
) -> Iterator[Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]] | None]:
    """The ``map`` of a distributed executor for a committee batch, or ``None`` for local."""
    if name in (None, "local"):
        yield None
        return
    from reprobridge_sdk.run.executors import make_executor  # noqa: PLC0415
    from reprobridge_sdk.run.select import usage_error  # noqa: PLC0415

    options = options_from_flags(scheduler, shared_fs, job_extra)
    if name in ("dask", "slurm") and options.shared_fs is not True:
        raise usage_error(
            "N004",
            f"a batch of artifacts on the {name!r} executor needs a shared file system",
            hint="the workers read the artifacts where they are: add --shared-fs",
        )
    with make_executor(name, jobs=jobs, options=options) as executor:
        yield executor.map

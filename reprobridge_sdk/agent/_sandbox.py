"""The build agent's runs of repository code outside the runner, in the runner's sandbox.

The Reproducer's smoke runs and the Builder's import probes start the repository's code
directly (not through :func:`reprobridge_sdk.run.run`). With the sandbox on (the build's
default) :func:`confined` gives them what the runner gives a sandboxed launcher
(:mod:`reprobridge_sdk.run.sandbox`): the command wrapped in bubblewrap with its seccomp
filter, and the environment allow-list (the caller's tokens stay out). What stays visible is
``visible`` (the working copy, read-only), the built environment's interpreter and packages,
a scratch directory of the run (writable, its ``HOME``), ``writable`` (the build's compile
caches, :mod:`reprobridge_sdk.agent._caches`) and, for a smoke run, a private copy of the code
in the code's place (writable: research code writes ``results/`` beside itself); ``PATH``
entries outside that are left out.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

__all__ = ["confined"]


@contextlib.contextmanager
def confined(
    argv: Sequence[str],
    *,
    workdir: Path,
    visible: Sequence[Path],
    environment: Path,
    caller: Mapping[str, str],
    declared: Mapping[str, str],
    private: Path | None = None,
    writable: Sequence[Path] = (),
) -> Iterator[tuple[list[str], dict[str, str], tuple[int, ...]]]:
    """The sandboxed command, its environment and the descriptors it inherits (the seccomp
    filter's), valid until the block ends. ``environment`` is the prefix of the built
    environment; ``caller`` the environment the command would get unsandboxed; ``declared``
    the variables it must keep; ``private`` a tree the command may write, as the runner's
    private tree (:func:`reprobridge_sdk.run.sandbox.private_tree`): its writes go to a copy
    of its own, and the tree stays as it was; ``writable`` folders the command may write in
    place (shared with the build's other runs)."""
    from reprobridge_sdk.run import sandbox  # noqa: PLC0415 - on use

    with contextlib.ExitStack() as stack:
        scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="rb-agent-"))
        copies = {}
        if private is not None:
            copies[private.resolve()] = stack.enter_context(sandbox.private_tree(private))
        run_dir = Path(scratch)
        readable = [*visible, *sandbox.interpreter_paths(environment)]
        roots = sandbox.visible_roots(readable, [run_dir, *writable])
        env, _dropped = sandbox.sandbox_env(caller, declared, run_dir=run_dir, roots=roots)
        with sandbox.seccomp_fd() as fd:
            command = sandbox.sandbox_command(
                argv,
                workdir=workdir,
                run_dir=run_dir,
                seccomp=fd,
                readable=readable,
                writable=writable,
                private=copies,
            )
            yield command, env, (fd,)

"""``reprobridge check``: the clean-room check of an artifact or a packed archive."""

# ruff: noqa: PLC0415 - imports stay inside commands so that the CLI starts fast

from __future__ import annotations

import sys
from pathlib import Path

import click

from reprobridge_sdk.cli import artifact_alias
from reprobridge_sdk.cli._output import (
    echo_finding,
    fail,
    failing,
    format_option,
    note,
    report_options,
    say,
    write_json,
)

from ._safety import note_artifact_configs, sandbox_option, warn_unsandboxed

__all__ = ["check"]


@click.command("check")
@click.argument("path", type=click.Path(path_type=Path, exists=True), default=".")
@click.option("--scored", is_flag=True, help="Also rerun the scored launchers and audit them.")
@click.option("--keep", is_flag=True, help="Keep the temporary copy (its path is reported).")
@click.option(
    "--pass-env",
    multiple=True,
    metavar="NAME",
    help="Keep this variable in the clean shell too. Proxies, CA bundles, index URLs and uv's "
    "and pip's configuration pass without it. Repeatable.",
)
@click.option(
    "--installer-cache/--no-installer-cache",
    default=True,
    show_default=True,
    help="Let the clean shell reuse your uv and pip caches (UV_CACHE_DIR, PIP_CACHE_DIR); "
    "hashes are still checked. --no-installer-cache downloads every wheel again.",
)
@sandbox_option("the artifact's launchers")
@click.option(
    "--record",
    is_flag=True,
    help="Write the check's record into the artifact (runs/check.json), for an audit's "
    "reusable badge. A directory only.",
)
@click.option(
    "--sign",
    "sign",
    is_flag=True,
    help="Sign the check's record (runs/check.dsse.json) with --key or "
    "$REPROBRIDGE_SIGNING_KEY, as run --sign signs runs. With --record only.",
)
@click.option("--key", "key_file", type=click.Path(dir_okay=False), help="Signing key file.")
@format_option("text", "json")
@report_options
@artifact_alias()
def check(  # noqa: PLR0917 - click passes one argument per option
    path: Path,
    scored: bool,
    keep: bool,
    pass_env: tuple[str, ...],
    installer_cache: bool,
    sandbox: bool,
    record: bool,
    sign: bool,
    key_file: str | None,
    fmt: str,
) -> None:
    """Copy PATH (an artifact directory or a packed archive) into a clean room and rerun it.

    In a clean shell (a minimal PATH, a fresh HOME, a UTF-8 locale) and a fresh environment
    built from the lock: validate, run the smoke launchers, audit them (with --scored: rerun
    the scored launchers and audit them against the references). Each step is timed. The
    clean shell shares your uv and pip caches (unless --no-installer-cache) and your network
    configuration (proxies, CA bundles, index URLs, uv's and pip's settings: names listed
    in the report, never values), and nothing else unless --pass-env names it.

    The launchers run in the sandbox (refused with N011 where it cannot work; --no-sandbox
    runs them unconfined, N031); the environment is built outside it. No configuration file
    applies, the artifact's own least of all (N030 names one it ships).

    With --record, the check writes runs/check.json into the artifact directory: what it
    checked (the digest of its files) and how each step ended, for an audit's reusable badge.
    With --sign too, its envelope runs/check.dsse.json beside it, which an audit verifies
    (under --trust, against the KEYS file). A passing --scored check signed with a key the
    KEYS file marks committee counts as the committee's re-execution of every measured task
    (results reproduced).

    Where the check's runs repeat the artifact's recorded runs of their launcher and seed
    byte for byte, it proposes 'deterministic: true' for the launcher (C027, information).

    \b
    Exit codes: 0 every step passed, 1 a step failed, 2 usage or I/O error.
    """
    from reprobridge_sdk.authoring.check import check as check_api
    from reprobridge_sdk.errors import UsageError
    from reprobridge_sdk.findings import finding

    signer = None
    if sign or key_file is not None:
        if not record:
            message = "--sign and --key sign the check's record: give --record too"
            fail(UsageError(message, [finding("N004", message, hint="add --record")]))
        from reprobridge_sdk.signing import load_signing_key

        with failing():
            signer = load_signing_key(key_file)
    if not sandbox:
        warn_unsandboxed("check", "the artifact's code")
    note_artifact_configs([path], "check")
    with failing():
        report = check_api(
            path,
            scored=scored,
            keep=keep,
            pass_env=pass_env,
            installer_cache=installer_cache,
            sandbox=sandbox,
            record=record,
            sign=signer,
        )
    network = ", ".join(report.network_env) or "none"
    named = f"; --pass-env: {', '.join(report.pass_env)}" if report.pass_env else ""
    # on stderr, so also beside JSON: what of the caller's environment reached the clean shell
    note(f"clean shell: network configuration passed: {network}{named}")
    if fmt == "json":
        write_json(report.to_dict())
        sys.exit(0 if report.ok else 1)
    for step in report.steps:
        mark = "ok  " if step.ok else "FAIL"
        say(f"{mark} {step.name:<13} {step.seconds:8.2f} s  {step.detail}")
        for item in step.findings:
            if item.severity.value == "error":
                echo_finding(item, str(path))
    for item in report.suggestions:
        echo_finding(item, str(path))
    say(f"check {'passed' if report.ok else 'failed'} in {report.seconds:.1f} s")
    if keep:
        note(f"the copy is kept in {report.copy}")
    if report.record is not None:
        note(f"check record written: {report.record}")
    sys.exit(0 if report.ok else 1)

"""``reprobridge keys``: create signing keys (spec ``keys``)."""

from __future__ import annotations

import click

from reprobridge_sdk.cli import SuggestingGroup
from reprobridge_sdk.cli._output import failing, note, output_option, say

__all__ = ["keys"]


@click.group("keys", cls=SuggestingGroup, context_settings={"help_option_names": ["-h", "--help"]})
def keys() -> None:
    """Create ed25519 keys for signed evidence."""


@keys.command("generate")
@click.argument("name")
@output_option(
    "Private key file (default NAME.key); the KEYS line goes to NAME.pub and stdout.",
    type=click.Path(dir_okay=False),
)
def generate(name: str, output: str | None) -> None:
    """Write a new private key (mode 0600) and print its KEYS line: NAME ed25519 KEY.

    \b
    Exit codes: 0 written, 2 the name is not a signer name, a file cannot be written or the
    extra 'signing' is not installed (E015).
    """
    from reprobridge_sdk.io.atomic import atomic_write_bytes, atomic_write_text  # noqa: PLC0415
    from reprobridge_sdk.signing.keys import (  # noqa: PLC0415
        generate_key,
        parse_trusted_keys,
        public_line,
    )

    target = output or f"{name}.key"
    with failing(doing="write"):
        pem, key = generate_key()
        line = public_line(name, key)
        parse_trusted_keys(line + "\n", "NAME")  # the name must be a valid signer name
        atomic_write_bytes(target, pem, mode=0o600)
        atomic_write_text(f"{target.removesuffix('.key')}.pub", line + "\n")
    say(line)
    note(f"wrote {target} (keep it secret) and its KEYS line")

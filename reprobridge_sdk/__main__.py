"""``python -m reprobridge_sdk`` runs the command line (``python -m reprobridge`` does too)."""

from reprobridge_sdk.cli import main

if __name__ == "__main__":
    main(prog_name="python -m reprobridge_sdk")

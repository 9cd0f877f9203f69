"""``python -m reprobridge_sdk`` runs the command line."""

from reprobridge_sdk.cli import main

main()

"""``python -m reprobridge``: the same command line as the ``reprobridge`` console script."""

from reprobridge_sdk.cli import main

if __name__ == "__main__":
    main(prog_name="python -m reprobridge")

"""The ``sidecar`` command's entry point. A Claude Code hook as ``sidecar agent install`` writes
it (``recall --hook``, ``session-start --hook``) runs on every prompt the user types, so it
starts without the CLI (``sidecar.cli.hook``); anything else is the CLI (``sidecar.cli.main``).
"""

from __future__ import annotations

import sys


def main() -> None:
    from sidecar.cli.hook import hook_args, run

    hook = hook_args(sys.argv[1:])
    if hook is not None:
        sys.exit(run(*hook))
    from sidecar.cli.main import main as cli

    cli()

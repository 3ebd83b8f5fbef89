"""`python -m mini_claude` runs the CLI.

After `-p` has printed its answer and shut its MCP servers down (every child reaped, the session file written),
nothing is left to do but the interpreter's own teardown of every imported module, which takes longer than the
run's last step: the process exits at once instead (streams and log handlers flushed first)."""

import logging
import os
import sys

from mini_claude.cli.main import main

code = main()
if "-p" in sys.argv[1:] or "--print" in sys.argv[1:]:
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
raise SystemExit(code)

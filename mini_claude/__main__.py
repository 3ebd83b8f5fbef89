"""`python -m mini_claude` runs the CLI."""

from mini_claude.cli.main import main

raise SystemExit(main())

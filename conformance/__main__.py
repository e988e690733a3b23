"""`python -m conformance`: the torch-conformance command line (conformance/cli.py)."""

from conformance.cli import main

raise SystemExit(main())

"""`python -m conformance.report`: the report command alone, without the rest of the CLI or torch."""

from conformance.report.cli import main

raise SystemExit(main())

from conformance.report.cli import main

raise SystemExit(main())

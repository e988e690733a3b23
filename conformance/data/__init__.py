"""Cases as data: loading and validating case files, known failures, the upstream parity mapping,
and the selection of what a run executes (variants, devices)."""

"""Benchmarks (`torch-conformance bench`): per-call timings of the wrappers a build generates, set
beside the figures the upstream changes publish, and the harness's own cost (`bench harness`)."""

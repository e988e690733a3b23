"""The self-check: the harness's own cases run against seeded faults (deliberately broken
builds), to show that every oracle can fail. It sits apart from the run: faults reach the
runner only through its extensions (conformance/run/extensions.py).

* faults.py: the faults, each naming the behaviour whose contract it breaks;
* codegen.py: how an internals fault rewrites the code a build generates;
* run.py: clean run, faulted runs, kills, gaps, the report;
* cli.py: `torch-conformance selftest`.
"""

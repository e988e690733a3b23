"""torch-conformance: does this PyTorch build honour the 2026 AOTAutograd/dynamo codegen contracts?

PYTEST_DONT_REWRITE: `python -m conformance run` imports this package before pytest starts, and
pytest would warn (an error under filterwarnings=error) that it cannot rewrite it.

Imports sit at the top of a module. One inside a function says why, in one of three ways
(tests/test_layout.py checks it):

* `# lazy: start-up`: start-up is what a process pays before its work begins. pytest loads the
  plugin in every project; the command line's --help, validate, list, schema, report and the
  processes that only run others (run's, the explorer's) load what they need and no more: never
  torch, pytest or hypothesis where they do without, nor a heavy part of torch (torch._dynamo,
  torch._inductor, functorch.compile) where torch alone does. Such an import waits for the
  function that needs it.
* `# guarded: <what is absent>`: in a `try` that turns an ImportError into "this build has no ...",
  for a part of torch some builds lack.
* `# noqa: F401  # <why>`: imported for its side effect, or to learn whether the build imports.
"""

__version__ = "0.1.0"

"""The explorer (`torch-conformance explore`): contract-aware generative differential testing.
grammar.py draws programs, engine.py runs, confirms and shrinks them, emit.py writes findings."""

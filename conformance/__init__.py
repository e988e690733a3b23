"""torch-conformance: does this PyTorch build honour the 2026 AOTAutograd/dynamo codegen contracts?

PYTEST_DONT_REWRITE: `python -m conformance run` imports this package before pytest starts, and
pytest would warn (an error under filterwarnings=error) that it cannot rewrite it.
"""

__version__ = "0.1.0"

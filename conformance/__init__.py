"""torch-conformance: does this PyTorch build honour the 2026 AOTAutograd/dynamo codegen contracts?"""

__version__ = "0.1.0"

"""Helpers the tests import (fixtures stay in conftest.py files)."""

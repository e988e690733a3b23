"""Hypothesis profiles (``ci``, the default, fast; ``thorough``: ``--hypothesis-profile thorough``) and the
fixtures every test folder uses."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers.cases import CaseFactory, case_factory
from tests.helpers.real_run import real_run  # noqa: F401  # the fixture, for every folder

_SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile(
    "ci",
    max_examples=25,
    deadline=None,
    suppress_health_check=_SLOW_DATA,
    derandomize=True,
    print_blob=True,
)
settings.register_profile(
    "thorough", max_examples=400, deadline=None, suppress_health_check=_SLOW_DATA, print_blob=True
)
settings.load_profile("ci")


def pytest_sessionstart(session: object) -> None:
    """torch's structured-trace records are data for the capture, not log lines: pytest's log
    capture would print hundreds of empty ones with every failing test's output."""
    import logging

    from conformance.pytest_plugin.plugin import _NoTraceRecords

    plugin = session.config.pluginmanager.get_plugin("logging-plugin")  # type: ignore[attr-defined]  # pytest.Session
    for name in ("caplog_handler", "report_handler"):
        handler = getattr(plugin, name, None)
        if isinstance(handler, logging.Handler):
            handler.addFilter(_NoTraceRecords())


@pytest.fixture
def make_case(tmp_path: Path) -> CaseFactory:
    """Write a case file from YAML text (dedented) and load it; `name` sets its path/id."""
    return case_factory(tmp_path)

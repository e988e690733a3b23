"""Hypothesis profiles: ``ci`` (default, fast) and ``thorough`` (``--hypothesis-profile thorough``)."""

from hypothesis import HealthCheck, settings

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

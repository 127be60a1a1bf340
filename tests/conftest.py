"""Shared pytest configuration.

Hypothesis profiles: ``ci`` (default; bounded run time) and ``slow`` (many more examples).  Select one with the
``HYPOTHESIS_PROFILE`` environment variable or pytest's ``--hypothesis-profile`` option.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile(
    "slow",
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

"""Test set-up: 8 forced CPU devices (before jax is imported), strict JAX, hypothesis profiles."""

from __future__ import annotations

import os

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
from hypothesis import HealthCheck, settings

jax.config.update("jax_numpy_rank_promotion", "raise")

# `ci` (the default: a bare `pytest`) keeps the whole suite near a few minutes on 2 cores;
# HYPOTHESIS_PROFILE=dev digs deeper. `-m "not slow"` skips the tests that run subprocesses.
settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile(
    "dev",
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

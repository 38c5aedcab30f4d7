"""Test set-up: 8 forced CPU devices (before jax is imported), strict JAX, hypothesis profiles,
and the `devices(n)` marker with the helpers that give multi-device tests CPU devices or
skip them where fewer exist."""

from __future__ import annotations

import os

# 8 CPU devices, unless the run asks for another count: XLA_FLAGS=--xla_force_host_platform_device_count=1
# checks that the multi-device tests skip cleanly where one device is all there is.
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    if "--xla_force_host_platform_device_count" in os.environ.get("XLA_FLAGS", "")
    else f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=8".strip()
)
os.environ.setdefault("JAX_PLATFORMS", "cpu")
# An error inside the advice fails the test that met it, where users get the error advised on.
os.environ.setdefault("AXISCHECK_ADVICE_ERRORS", "raise")

import math
from collections.abc import Sequence
from typing import Any

import jax
import pytest
from hypothesis import HealthCheck, settings

jax.config.update("jax_numpy_rank_promotion", "raise")

# The suite runs on CPU devices whatever chips the machine has: where the run's platforms
# include the CPU, it comes first, so it is the default backend (the devices pmap,
# jax.devices() and jax.make_mesh use). A platform list without it (JAX_PLATFORMS=cuda)
# leaves the multi-device tests to skip.
_PLATFORMS = [p for p in os.environ.get("JAX_PLATFORMS", "").split(",") if p]
if "cpu" in _PLATFORMS and _PLATFORMS[0] != "cpu":
    jax.config.update("jax_platforms", ",".join(["cpu", *(p for p in _PLATFORMS if p != "cpu")]))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "devices(n): runs on n devices of the default backend (pmap's, jax.devices()'s); skipped where fewer exist",
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked `devices(n)` is skipped, with the reason, where the default backend has
    fewer than n devices (a run with XLA_FLAGS=--xla_force_host_platform_device_count=1,
    or one whose platforms leave out the CPU on a machine with one chip)."""
    marker = item.get_closest_marker("devices")
    if marker is not None:
        _skip_unless(int(marker.args[0]), jax.devices(), "devices of the default backend")


def cpu_devices(n: int) -> list[Any]:
    """The first `n` CPU devices, or the test is skipped with the reason: a multi-device
    test asks for CPU devices, which the suite forces, whatever chips the machine has."""
    try:
        devices = jax.devices("cpu")
    except RuntimeError:  # a run whose platforms leave out the CPU
        devices = []
    _skip_unless(n, devices, "CPU devices")
    return list(devices[:n])


def cpu_mesh(sizes: Sequence[int], names: Sequence[str], axis_types: Any = None) -> jax.sharding.Mesh:
    """`jax.make_mesh(sizes, names, axis_types=...)` over CPU devices (see `cpu_devices`)."""
    types = {} if axis_types is None else {"axis_types": tuple(axis_types)}
    return jax.make_mesh(tuple(sizes), tuple(names), devices=cpu_devices(math.prod(sizes)), **types)


def cpu_mesh_or_none(sizes: Sequence[int], names: Sequence[str], axis_types: Any = None) -> Any:
    """A module's shared mesh over CPU devices, made at import: None where fewer exist, for
    the tests that use it are marked `devices(n)` and skip before they reach it."""
    try:
        available = len(jax.devices("cpu"))
    except RuntimeError:
        available = 0
    return cpu_mesh(sizes, names, axis_types) if available >= math.prod(sizes) else None


def _skip_unless(n: int, devices: Sequence[Any], what: str) -> None:
    if len(devices) < n:
        pytest.skip(
            f"needs {n} {what}, this run has {len(devices)}: XLA_FLAGS="
            f"--xla_force_host_platform_device_count={max(n, 8)}, with the CPU among JAX_PLATFORMS, gives them"
        )


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

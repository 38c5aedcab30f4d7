"""The installed JAX's release, for the rules whose verdict changed between releases.

Lint never imports JAX (it is slow to import, and may not be installed where lint runs):
the release is read from the installed package's metadata. The thresholds mirror the
named facts of `axischeck._core._jax_compat`, which the tests hold equal.
"""

from __future__ import annotations

import functools
import re
from importlib import metadata

VMAP_MATCHES_CONTAINERS_BY_POSITION_FROM = (0, 12, 1)
"""`_jax_compat.VMAP_MATCHES_CONTAINERS_BY_POSITION`: from this release, `jax.vmap` matches
a container of in_axes/out_axes to any node with as many children (dicts: the same keys)."""


@functools.cache
def installed_jax() -> tuple[int, ...] | None:
    """The installed jax's (major, minor, patch), or None where none is installed."""
    try:
        version = metadata.version("jax")
    except metadata.PackageNotFoundError:
        return None
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def vmap_matches_containers_by_position() -> bool:
    """Whether the installed `jax.vmap` matches containers by position. With no JAX
    installed, True: lint then reports only what every supported release refuses."""
    release = installed_jax()
    return release is None or release >= VMAP_MATCHES_CONTAINERS_BY_POSITION_FROM

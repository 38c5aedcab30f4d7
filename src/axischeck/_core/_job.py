"""A job of several processes (a multi-host TPU or GPU pod), as one of its processes sees it.

Every process of such a job runs the same program on its own devices
(docs/jax-semantics.md#jobs-of-several-processes). JAX's pmap maps each process's own
arguments over that process's devices and joins them into one device axis across the
job, so the size a process maps is its local device count, not the job's; shard_map and
jit read an array as the whole global array, of which each process holds some devices'
blocks. These facts are what axischeck checks and explains those rules with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jax
from jax.core import Tracer


@dataclass(frozen=True, slots=True)
class Job:
    """The job this process belongs to, as a transform's devices see it; carried by the
    errors about it (`AxisCheckError.job`).

    **Attributes:**

    - `processes`: how many processes the job has (`jax.process_count()`).
    - `process`: this process's index (`jax.process_index()`).
    - `local_devices`: this process's devices (`jax.local_device_count()`).
    - `owners`: the process of each device the transform may use, in the order JAX's pmap
      lays its mesh over them: every device of the backend grouped by process, or pmap's
      `devices=` as given.
    - `local_only`: the pmap is traced (inside `jax.jit` or another transform), where JAX
      lays its mesh over this process's own devices alone.

    ```python
    >>> job = Job(processes=2, process=1, local_devices=4, owners=(0, 0, 0, 0, 1, 1, 1, 1))
    >>> job.global_devices, job.share, job.held_here(4, None), job.held_here(2, None)
    (8, 4, 4, 0)
    ```
    """

    processes: int
    process: int
    local_devices: int
    owners: tuple[int, ...]
    local_only: bool = False

    @property
    def global_devices(self) -> int:
        """The devices the transform may use across the job (`jax.device_count()`)."""
        return len(self.owners)

    @property
    def share(self) -> int:
        """This process's devices among them: the size each of its pmap calls must map."""
        return self.owners.count(self.process)

    def mesh(self, size: int, axis_size: int | None) -> tuple[int, ...]:
        """The owner of each device a pmap mapping `size` on this process lays its mesh
        over (JAX's pmap.py:_get_mesh_devices): the first `axis_size` devices (the global
        size, when given) or `size` per process; traced, this process's first `size`."""
        if self.local_only:
            return (self.process,) * min(size, self.local_devices)
        total = axis_size if axis_size is not None else size * self.processes
        return self.owners[:total]

    def held_here(self, size: int, axis_size: int | None) -> int:
        """How many of that mesh's devices are this process's: JAX's pmap runs only where
        this is `size` (each device takes one slice of the process's arguments)."""
        return self.mesh(size, axis_size).count(self.process)


def this_job(devices: Sequence[Any] | None = None, backend: str | None = None) -> Job | None:
    """The job this process belongs to, for a transform over `devices` (else every device
    of `backend`), or None in a job of one process: the common case, where pmap's device
    count is all there is to know."""
    processes = jax.process_count(backend)
    if processes <= 1:
        return None
    if devices is not None:
        owners = tuple(int(d.process_index) for d in devices)
    else:  # JAX groups them by process (the old pmap's order, kept for collectives' speed)
        owners = tuple(sorted(int(d.process_index) for d in jax.devices(backend)))
    return Job(processes, jax.process_index(backend), jax.local_device_count(backend), owners)


def process_local(value: Any) -> bool | None:
    """Whether a call's argument is this process's own data (a NumPy array or scalar, a
    Python number, a `jax.Array` on this process's devices alone), not part of a global
    array that spans other processes; None for a tracer or a `ShapeDtypeStruct`, which do
    not say."""
    if isinstance(value, (Tracer, jax.ShapeDtypeStruct)):
        return None
    if isinstance(value, jax.Array):
        return bool(value.is_fully_addressable)
    return True


def spans_processes(job: Job, mesh: Any, devices: int) -> bool:
    """Whether a mesh of `devices` devices (the JAX `Mesh` itself where there is one)
    reaches beyond this process: its devices' owners say, else its size (a mesh larger
    than this process's devices must span others)."""
    if isinstance(mesh, jax.sharding.Mesh):
        return len({d.process_index for d in mesh.devices.flat}) > 1
    return devices > job.local_devices

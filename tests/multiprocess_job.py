"""One process of a two-process JAX job on CPU, for `test_multiprocess.py`.

Run as `python multiprocess_job.py PORT PROCESS_ID`: joins the job whose coordinator
listens on 127.0.0.1:PORT (process 0 hosts it), 4 CPU devices per process, collectives
over gloo. Each scenario runs JAX's transform and axischeck's on the same arguments and
records what each did (values, shapes, exception types, axischeck's message and facts);
the last line of stdout is the JSON record. Nothing is asserted here: the test reads
both processes' records. Every process runs the same scenarios in the same order, as a
job's processes must (a collective waits for every process to reach it).
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
os.environ["JAX_PLATFORMS"] = "cpu"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import axischeck as ax  # noqa: E402


def _psum_index(x: jax.Array) -> jax.Array:
    return lax.psum(x, "i") + lax.axis_index("i")


# Made before the job starts, as a module-level decorator is: axischeck must not touch
# JAX's backends before jax.distributed.initialize, which refuses to run after them.
EARLY = ax.pmap(_psum_index, axis_name="i")


def _outcome(run: Callable[[], Any]) -> dict[str, Any]:
    """What `run` did: its value (as nested lists) and shape, or its exception."""
    try:
        out = run()
    except Exception as err:
        job = getattr(err, "job", None)
        facts = ("processes", "process", "local_devices", "global_devices")
        return {
            "error": type(err).__name__,
            "types": [c.__name__ for c in type(err).__mro__],
            "message": str(err),
            "job": {k: getattr(job, k) for k in facts} if job is not None else None,
        }
    if isinstance(out, ax.Prediction):
        return {"shape": list(jax.tree_util.tree_leaves(out.shapes)[0])}
    return {"shape": list(out.shape), "value": _local_value(out)}


def _local_value(out: Any) -> Any:
    """The value this process holds: the whole array, or its devices' shards of a global one."""
    if isinstance(out, jax.Array) and not out.is_fully_addressable:
        return [np.asarray(s.data).tolist() for s in sorted(out.addressable_shards, key=lambda s: s.device.id)]
    return np.asarray(out).tolist()


def main(port: int, process: int) -> None:
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=process)
    record: dict[str, Any] = {
        "jax": jax.__version__,
        "process_count": jax.process_count(),
        "device_count": jax.device_count(),
        "local_device_count": jax.local_device_count(),
    }
    local = jax.local_device_count()

    def both(name: str, jax_run: Callable[[], Any], ax_run: Callable[[], Any]) -> None:
        record[name] = {"jax": _outcome(jax_run), "ax": _outcome(ax_run)}

    def rows(n: int) -> jax.Array:  # this process's own rows, different on each process
        return jnp.arange(n * 3, dtype=jnp.float32).reshape(n, 3) + 100 * process

    # pmap: psum and axis_index over the job's 8 devices, 4 rows from each process.
    plain = jax.pmap(_psum_index, axis_name="i")
    both("pmap_psum_axis_index", lambda: plain(rows(local)), lambda: EARLY(rows(local)))
    record["pmap_psum_axis_index"]["predict"] = _outcome(lambda: EARLY.predict(rows(local)))
    gather = lambda x: lax.all_gather(x, "i")  # noqa: E731 - each device gathers every process's rows
    both("pmap_all_gather", lambda: jax.pmap(gather, "i")(rows(local)), lambda: ax.pmap(gather, "i")(rows(local)))
    record["pmap_all_gather"]["predict"] = _outcome(lambda: ax.pmap(gather, "i").predict(rows(local)))
    both(
        "pmap_global_axis_size",
        lambda: jax.pmap(gather, "i", axis_size=2 * local)(rows(local)),
        lambda: ax.pmap(gather, "i", axis_size=2 * local)(rows(local)),
    )
    record["pmap_global_axis_size"]["predict"] = _outcome(
        lambda: ax.pmap(gather, "i", axis_size=2 * local).predict(rows(local))
    )
    signed = ax.pmap(_psum_index, axis_name="i", signature="(c)->(c)")
    both("pmap_signature", lambda: plain(rows(local)), lambda: signed(rows(local)))
    # Traced inside jit, pmap runs on this process's devices alone: 2 of them work there.
    for n in (local, 2):
        both(f"jit_pmap_{n}", lambda n=n: jax.jit(plain)(rows(n)), lambda n=n: jax.jit(EARLY)(rows(n)))
    both(
        "jit_pmap_all_gather",
        lambda: jax.jit(jax.pmap(gather, "i"))(rows(local)),
        lambda: jax.jit(ax.pmap(gather, "i"))(rows(local)),
    )

    # pmap given another size than this process's device count: the job's global count,
    # one that does not split over the devices, and fewer than it has.
    for n in (2 * local, local + 1, 2):
        both(f"pmap_size_{n}", lambda n=n: plain(rows(n)), lambda n=n: EARLY(rows(n)))
        struct = jax.ShapeDtypeStruct((n, 3), jnp.float32)
        record[f"pmap_size_{n}"]["predict"] = _outcome(lambda s=struct: EARLY.predict(s))
        record[f"pmap_size_{n}"]["signature"] = _outcome(lambda n=n: signed(rows(n)))
    both("jit_pmap_size_8", lambda: jax.jit(plain)(rows(2 * local)), lambda: jax.jit(EARLY)(rows(2 * local)))

    # shard_map, jit and smap on a mesh over the job's 8 devices, with global arrays.
    mesh = Mesh(np.array(jax.devices()), ("x",))
    spec = NamedSharding(mesh, P("x"))
    whole = jax.make_array_from_process_local_data(spec, np.asarray(rows(local)))
    total = lambda a: lax.psum(a, "x")  # noqa: E731
    both(
        "shard_map_global",
        lambda: jax.shard_map(total, mesh=mesh, in_specs=P("x"), out_specs=P())(whole),
        lambda: ax.shard_map(total, mesh=mesh, in_specs=P("x"), out_specs=P())(whole),
    )
    record["shard_map_global"]["predict"] = _outcome(
        lambda: ax.shard_map(total, mesh=mesh, in_specs=P("x"), out_specs=P()).predict(whole)
    )
    row_sum = lambda r: r.sum() * 2.0  # noqa: E731
    both("jit_vmap_global", lambda: jax.jit(jax.vmap(row_sum))(whole), lambda: jax.jit(ax.vmap(row_sum))(whole))
    record["jit_vmap_global"]["sharding_agrees"] = str(jax.jit(jax.vmap(row_sum))(whole).sharding) == str(
        jax.jit(ax.vmap(row_sum))(whole).sharding
    )
    with jax.set_mesh(mesh):
        both(
            "smap_global",
            lambda: jax.smap(total, in_axes=0, out_axes=None, axis_name="x")(whole),
            lambda: ax.smap(total, in_axes=0, out_axes=None, axis_name="x")(whole),
        )
        record["smap_local_data"] = {
            "jax": _outcome(lambda: jax.smap(total, in_axes=0, out_axes=None, axis_name="x")(np.asarray(rows(local)))),
            "ax": _outcome(lambda: ax.smap(total, in_axes=0, out_axes=None, axis_name="x")(np.asarray(rows(local)))),
        }

    # This process's own rows given where the global array belongs.
    local_rows = np.asarray(rows(local))
    both(
        "shard_map_local_data",
        lambda: jax.shard_map(total, mesh=mesh, in_specs=P("x"), out_specs=P())(local_rows),
        lambda: ax.shard_map(total, mesh=mesh, in_specs=P("x"), out_specs=P())(local_rows),
    )
    record["shard_map_local_data"]["predict"] = _outcome(
        lambda: ax.shard_map(total, mesh=mesh, in_specs=P("x"), out_specs=P()).predict(local_rows)
    )
    both(
        "jit_shard_map_local_data",
        lambda: jax.jit(jax.shard_map(total, mesh=mesh, in_specs=P("x"), out_specs=P()))(local_rows),
        lambda: jax.jit(ax.shard_map(total, mesh=mesh, in_specs=P("x"), out_specs=P()))(local_rows),
    )
    print(json.dumps(record), flush=True)


if __name__ == "__main__":
    try:
        main(int(sys.argv[1]), int(sys.argv[2]))
    except Exception:
        traceback.print_exc()
        sys.exit(1)

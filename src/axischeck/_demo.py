"""The demo: the examples of the article that motivated axischeck (the einsum example and
friends), predicted, run, and explained."""

from __future__ import annotations

import time
from typing import Annotated, Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from ._check import check
from ._core._errors import AxisCheckError
from ._core._jax_compat import JAX_VMAP
from ._pmap import pmap
from ._shard_map import shard_map
from ._vmap import vmap

Array = jax.Array


def _heading(text: str) -> None:
    print(f"\n=== {text} " + "=" * max(0, 70 - len(text)))


def _compare(name: str, predicted: Any, real: Any) -> None:
    real_shapes = jax.tree_util.tree_map(lambda a: tuple(a.shape), real)
    ok = "OK" if predicted == real_shapes else "MISMATCH"
    print(f"{name}: predicted {predicted}, real {real_shapes}  [{ok}]")
    if ok != "OK":
        raise SystemExit(f"demo: prediction disagrees with JAX for {name}")


def complex_operation(x: Array, y: Array, z: Array) -> Array:
    """Seed example 3: x (a, b), y (b, c), z (a, c) -> (a, c)."""
    return jnp.einsum("ab,bc->ac", x, y) + z


def demo_einsum() -> None:
    _heading("3. einsum with a different mapped axis per argument")
    batched = vmap(complex_operation, in_axes=(0, 1, 0), out_axes=0, signature="(a,b),(b,c),(a,c)->(a,c)")
    x, y, z = jnp.ones((16, 8, 4)), jnp.ones((4, 16, 2)), jnp.ones((16, 8, 2))
    _compare("vmap(complex_operation, in_axes=(0, 1, 0))", batched.predict(x, y, z).shapes, batched(x, y, z))
    print(batched.explain(x, y, z))
    inferred = vmap(complex_operation, in_axes=(0, 1, 0))
    _compare("same, no signature (traced per example)", inferred.predict(x, y, z).shapes, inferred(x, y, z))

    _heading("3b. the bug: y has b=5 where x has b=4")
    bad_y = jnp.ones((5, 16, 2))
    try:
        JAX_VMAP(complex_operation, in_axes=(0, 1, 0))(x, bad_y, z)
    except ValueError as err:
        print(f"plain JAX says:\n  {type(err).__name__}: {err}")
    try:
        batched(x, bad_y, z)
    except AxisCheckError as err:
        print(f"axischeck says (before JAX runs):\n{type(err).__name__}: {err}")


def process_single(
    x: Annotated[Array, "i"], params: Annotated[dict[str, Array], {"W": "o i", "b": "o"}]
) -> Annotated[Array, "o"]:
    """Seed example 1: one example through a dense layer."""
    return jnp.dot(params["W"], x) + params["b"]


def demo_dense_and_nested() -> None:
    _heading("1. per-example dense layer, params not mapped (signature from annotations)")
    batch_process = vmap(process_single, in_axes=(0, None))
    x = jnp.ones((128, 784))
    params = {"W": jnp.ones((256, 784)), "b": jnp.ones((256,))}
    _compare(
        "vmap(process_single, in_axes=(0, None))", batch_process.predict(x, params).shapes, batch_process(x, params)
    )
    print(batch_process.explain(x, params))

    _heading("2. nested vmap over batch x time")

    def process_sequence(seq: Array, params: dict[str, Array]) -> Array:
        return jnp.tanh(jnp.dot(seq, params["W_seq"]) + params["b_seq"])

    f = vmap(vmap(process_sequence, in_axes=(0, None)), in_axes=(0, None))
    seqs = jnp.ones((32, 100, 64))
    p2 = {"W_seq": jnp.ones((64, 128)), "b_seq": jnp.ones((128,))}
    _compare("vmap(vmap(process_sequence))", f.predict(seqs, p2).shapes, f(seqs, p2))


def demo_silent_broadcast() -> None:
    _heading("5. the silent broadcasting bug in the training step")

    def forward(X: Array, W: Array, b: Array) -> Array:
        return jnp.dot(X, W) + b  # (32, 1): the article meant (32,)

    X, W, b = jnp.ones((32, 20)), jnp.ones((20, 1)), jnp.zeros(())
    y = jnp.ones((32,))
    print(f"plain JAX: (y * forward(X, W, b)).shape = {(y * forward(X, W, b)).shape}  (1024 terms, no error)")
    checked = check(forward, signature="n f, f o, -> n")
    try:
        checked(X, W, b)
    except AxisCheckError as err:
        print(f"axischeck.check with signature 'n f, f o, -> n':\n{type(err).__name__}: {err}")


def demo_monte_carlo() -> None:
    _heading("4. Monte Carlo pi: Python loop vs vmap")

    def monte_carlo_pi_single(key: Array, n_samples: int = 10000) -> Array:
        k1, k2 = jax.random.split(key)
        x = jax.random.uniform(k1, (n_samples,))
        y = jax.random.uniform(k2, (n_samples,))
        return 4.0 * jnp.mean((x**2 + y**2) <= 1.0)

    keys = jax.random.split(jax.random.PRNGKey(1768780800062), 1000)
    fast = jax.jit(vmap(monte_carlo_pi_single))
    _compare("vmap(monte_carlo_pi_single)", vmap(monte_carlo_pi_single).predict(keys).shapes, fast(keys))
    monte_carlo_pi_single(keys[0]).block_until_ready()  # warm the eager op caches, as for vmap
    t0 = time.perf_counter()
    loop = jnp.array([monte_carlo_pi_single(keys[i]) for i in range(1000)])  # the article's loop
    t_loop = time.perf_counter() - t0
    fast(keys).block_until_ready()
    t0 = time.perf_counter()
    est = fast(keys).block_until_ready()
    t_vmap = time.perf_counter() - t0
    print(
        f"Python loop over 1000 keys: {t_loop * 1e3:.1f} ms; jit(ax.vmap): {t_vmap * 1e3:.2f} ms;"
        f" speed-up {t_loop / t_vmap:.0f}x; pi ~ {float(est.mean()):.4f} (loop: {float(loop.mean()):.4f})"
    )


def complex_parallel_computation(x: Array) -> Array:
    """Seed example 6: collectives under pmap; x is (16,) per device."""
    local = x**2
    reduced = jax.lax.psum_scatter(local, axis_name="devices")  # type: ignore[no-untyped-call]
    gathered = jax.lax.all_gather(reduced, axis_name="devices")
    return jnp.mean(gathered, axis=0)


def demo_collectives() -> None:
    _heading("6. collectives under pmap, predicted for 8 and 16 devices")
    f = pmap(complex_parallel_computation, axis_name="devices")
    try:
        f.predict_with_devices(8, (8, 16))
    except AxisCheckError as err:
        print(f"on 8 devices, before anything compiles:\n{type(err).__name__}: {err}")
    ok = f.predict_with_devices(16, (16, 16))
    print(f"on 16 devices: predicted {ok.shapes}")


def reduce_scatter_squares(x: Array) -> Array:
    """Example 6 for `jax.shard_map` (pmap's successor): x is this device's block."""
    out: Array = jax.lax.psum_scatter(x**2, "devices", tiled=True)  # type: ignore[no-untyped-call]
    return out


def demo_shard_map() -> None:
    n = jax.device_count()
    _heading(f"7. the same with shard_map: {n} local device(s), then meshes this machine lacks")
    mesh = Mesh(np.array(jax.devices()), ("devices",))
    spec = P("devices")  # type: ignore[no-untyped-call]
    f = shard_map(reduce_scatter_squares, mesh=mesh, in_specs=spec, out_specs=spec)
    x = jnp.arange(1024.0)
    _compare(f"shard_map on {n} device(s)", f.predict(x).shapes, f(x))
    print(f.explain(x))
    big = f.predict_with_mesh({"devices": 16}, x)
    print(f"on 16 devices: predicted {big.shapes}, each device holding {big.block_shapes}")
    try:
        f.predict_with_mesh({"devices": 64}, x)
    except AxisCheckError as err:
        print(f"on 64 devices:\n{type(err).__name__}: {err}")


def main() -> int:
    print(f"axischeck demo on jax {jax.__version__}, {jax.device_count()} {jax.default_backend()} device(s)")
    demo_dense_and_nested()
    demo_einsum()
    demo_monte_carlo()
    demo_silent_broadcast()
    demo_collectives()
    demo_shard_map()
    return 0

"""axischeck benchmarks: every measurement side by side with plain JAX, in one run.

    python benchmarks/bench.py                      # full run (the numbers in the README)
    python benchmarks/bench.py --quick              # a few rounds, for CI (asserts nothing)
    python benchmarks/bench.py --only predict,eager # some groups
    python benchmarks/bench.py --json out.json --markdown table.md

Each group measures one cost target against plain JAX doing the same
thing in the same process: medians over repeated rounds (warm-up excluded), the two sides
interleaved round by round (alternating which goes first), overheads as the median of the
per-round differences. Each group runs in a fresh process of its own (`--one-process`
runs them all here), and memory rows run each side in its own subprocess. The table says
for each row what JAX costs, what axischeck costs, the ratio, the target and whether it
is met.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any, NamedTuple, TypeVar

_DEVICES_FLAG = "--xla_force_host_platform_device_count=8"
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    # 8 CPU devices for pmap and shard_map; JAX reads this when it starts.
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_DEVICES_FLAG}".strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import AbstractMesh, Mesh  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import axischeck as ax  # noqa: E402
from axischeck import _vmap as ax_vmap_module  # noqa: E402 - the inline own-time rows stub JAX's call

T = TypeVar("T")

EINSUM = "(a,b),(b,c),(a,c)->(a,c)"
AXES = (0, 1, 0)  # the einsum example's in_axes
BLOCK = "(n,k),(k,m)->(n,m)"
_ROWS = P("x", None)  # type: ignore[no-untyped-call]  # untyped in jax 0.10
BLOCK_SPECS: dict[str, Any] = {"in_specs": (_ROWS, P()), "out_specs": _ROWS}  # type: ignore[no-untyped-call]


def complex_operation(x: jax.Array, y: jax.Array, z: jax.Array) -> jax.Array:
    return jnp.einsum("ab,bc->ac", x, y) + z


def block(a: jax.Array, w: jax.Array) -> jax.Array:
    return jnp.tanh(a @ w)


def new_function() -> Callable[[jax.Array, jax.Array, jax.Array], jax.Array]:
    """`complex_operation` as a new function object: nothing of it is cached anywhere."""
    return lambda x, y, z: complex_operation(x, y, z)


def ready(tree: T) -> T:
    """`tree` once every array in it is computed."""
    for leaf in jax.tree_util.tree_leaves(tree):
        leaf.block_until_ready()
    return tree


# ------------------------------------------------------------------ timing


def median_us(fn: Callable[[], object], rounds: int, warmup: int = 3) -> float:
    """Median wall time of `fn()` in microseconds."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


class Paired(NamedTuple):
    """Medians of two interleaved measurements (us) and the median per-round difference."""

    jax: float
    ax: float
    diff: float


def paired_us(jax_fn: Callable[[], object], ax_fn: Callable[[], object], rounds: int, warmup: int = 3) -> Paired:
    """`jax_fn` and `ax_fn` timed in the same rounds, which one goes first alternating."""
    for _ in range(warmup):
        jax_fn()
        ax_fn()
    tj: list[float] = []
    ta: list[float] = []
    for i in range(rounds):
        for fn, out in ((jax_fn, tj), (ax_fn, ta)) if i % 2 == 0 else ((ax_fn, ta), (jax_fn, tj)):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    diff = statistics.median(a - j for a, j in zip(ta, tj, strict=True))
    return Paired(statistics.median(tj) * 1e6, statistics.median(ta) * 1e6, diff * 1e6)


def next_to_us(
    before: Callable[[], object], jax_fn: Callable[[], object], ax_fn: Callable[[], object], rounds: int
) -> Paired:
    """`jax_fn` and `ax_fn` timed as `paired_us` times them, each round run right after an
    untimed `before()` (JAX's eager call): the cost next to that call, which holds the
    processor's caches, without that call's own noise in the timing."""
    tj: list[float] = []
    ta: list[float] = []
    for i in range(rounds):
        for fn, out in ((jax_fn, tj), (ax_fn, ta)) if i % 2 == 0 else ((ax_fn, ta), (jax_fn, tj)):
            before()
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    diff = statistics.median(a - j for a, j in zip(ta, tj, strict=True))
    return Paired(statistics.median(tj) * 1e6, statistics.median(ta) * 1e6, diff * 1e6)


def once_us(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e6


def raised_us(fn: Callable[[], object], rounds: int, warmup: int = 1) -> tuple[float, str]:
    """Median time until `fn()` raises and its message is rendered, and the exception's type."""
    kinds: list[str] = []

    def attempt() -> None:
        try:
            fn()
        except Exception as err:  # the point: time whatever the user gets
            str(err)
            kinds.append(type(err).__name__)
            return
        raise AssertionError("expected a failure")

    return median_us(attempt, rounds, warmup), kinds[-1]


def sds(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.float32)  # type: ignore[no-untyped-call]  # untyped in jax 0.10


_NEW_SIZE = itertools.count(2)


def new_einsum_args() -> tuple[jax.ShapeDtypeStruct, ...]:
    """Einsum-example shapes no one in this process has seen: a new per-example size `a`
    (so JAX's own per-shape caches miss as well) and a varying batch size."""
    a = next(_NEW_SIZE)
    b = 1 + a % 16
    return sds(b, a, 4), sds(4, b, 2), sds(b, a, 2)


# ------------------------------------------------------------------ rows


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the table: `met` is None for rows without a target; `signature` says
    whether axischeck was given a signature (None: not applicable)."""

    what: str
    jax: str
    ax: str
    ratio: str
    target: str
    met: bool | None
    signature: bool | None = None


Result = tuple[dict[str, float], list[Row]]


def fmt_us(us: float) -> str:
    if us != us:  # NaN: not measured
        return "-"
    if abs(us) < 10:
        return f"{us:.2f} us"
    if abs(us) < 1e3:
        return f"{us:.1f} us"
    if abs(us) < 1e6:
        return f"{us / 1e3:.2f} ms"
    return f"{us / 1e6:.2f} s"


def fmt_x(value: float) -> str:
    return f"{value:.2f}x" if value < 10 else f"{value:.0f}x"


def ratio_row(what: str, jax_us: float, ax_us: float, at_most: float, signature: bool | None = None) -> Row:
    """axischeck / JAX, target: at most `at_most`."""
    r = ax_us / jax_us
    return Row(what, fmt_us(jax_us), fmt_us(ax_us), fmt_x(r), f"<= {at_most:g}x", r <= at_most, signature)


def speedup_row(what: str, jax_us: float, ax_us: float, at_least: float, signature: bool | None = None) -> Row:
    """JAX / axischeck, target: at least `at_least` times faster."""
    s = jax_us / ax_us
    return Row(
        what, fmt_us(jax_us), fmt_us(ax_us), f"{fmt_x(s)} faster", f">= {at_least:g}x faster", s >= at_least, signature
    )


def share_row(what: str, pair: Paired, at_most: float, signature: bool | None = None) -> Row:
    """The median per-round difference as a share of JAX's own call, target: at most
    `at_most` of it (0.02: 2%)."""
    share = pair.diff / pair.jax
    return Row(
        what,
        fmt_us(pair.jax),
        fmt_us(pair.ax),
        f"{pair.diff:+.1f} us ({share:+.1%})",
        f"<= {at_most:.0%} of JAX's call",
        share <= at_most,
        signature,
    )


def info_row(what: str, jax_us: float, ax_us: float, ratio: str = "", signature: bool | None = None) -> Row:
    return Row(what, fmt_us(jax_us), fmt_us(ax_us), ratio, "", None, signature)


NAN = float("nan")

CHECK_SHARE = 0.02
"""What a check may cost next to JAX's own eager call of the same transform: 2%."""

INLINE_SHARE = 0.05
"""What a transform made inline (built at each call, then called) may cost next to JAX's
own inline build and eager call: 5%."""

BUILD_RATIO = {"vmap": 2, "pmap": 2, "shard_map": 3}
"""How many times JAX's build of the same transform axischeck's build may cost (shard_map
checks its mesh and specs against each other when it is made)."""


# ------------------------------------------------------------------ 1. construction


def bench_construct(quick: bool) -> Result:
    """Building `ax.vmap` / `ax.pmap` / `ax.shard_map` vs JAX's own (targets in
    `BUILD_RATIO`: 2x, 3x for shard_map), with and
    without a signature; the same function each time (its predictor is shared) and, for
    vmap, a new function each time (the first transform of a function)."""
    rounds = 200 if quick else 5000
    mesh = Mesh(jax.devices(), ("x",))
    f = complex_operation
    cases: list[tuple[str, Callable[[], object], Callable[[str | None], object], str]] = [
        ("vmap", lambda: jax.vmap(f, in_axes=AXES), lambda s: ax.vmap(f, in_axes=AXES, signature=s), EINSUM),
        ("pmap", lambda: jax.pmap(f, in_axes=AXES), lambda s: ax.pmap(f, in_axes=AXES, signature=s), EINSUM),
        (
            "shard_map",
            lambda: jax.shard_map(block, mesh=mesh, **BLOCK_SPECS),
            lambda s: ax.shard_map(block, mesh=mesh, signature=s, **BLOCK_SPECS),
            BLOCK,
        ),
    ]
    data: dict[str, float] = {}
    rows = []
    for name, make_jax, make_ax, spec in cases:
        for sig in (None, spec):
            tag = "sig" if sig else "nosig"
            pair = paired_us(make_jax, partial(make_ax, sig), rounds)
            data[f"{name}_{tag}_jax_us"], data[f"{name}_{tag}_ax_us"] = pair.jax, pair.ax
            data[f"{name}_{tag}_ratio"] = pair.ax / pair.jax
            rows.append(ratio_row(f"build ax.{name}", pair.jax, pair.ax, BUILD_RATIO[name], sig is not None))

    def build_new(sig: str | None) -> object:
        return ax.vmap(new_function(), in_axes=AXES, signature=sig)

    for sig in (None, EINSUM):
        tag = "sig" if sig else "nosig"
        pair = paired_us(lambda: jax.vmap(new_function(), in_axes=AXES), partial(build_new, sig), rounds)
        data[f"vmap_newfn_{tag}_jax_us"], data[f"vmap_newfn_{tag}_ax_us"] = pair.jax, pair.ax
        data[f"vmap_newfn_{tag}_ratio"] = pair.ax / pair.jax
        rows.append(
            ratio_row("build ax.vmap of a new function", pair.jax, pair.ax, BUILD_RATIO["vmap"], sig is not None)
        )
    return data, rows


# ------------------------------------------------------------------ 2-3. eager calls


def einsum_arrays() -> tuple[jax.Array, jax.Array, jax.Array]:
    return jnp.ones((16, 8, 4)), jnp.ones((4, 16, 2)), jnp.ones((16, 8, 2))


def bench_inline(quick: bool) -> Result:
    """`ax.vmap(f, in_axes=...)(x, y, z)` written inline (a new transform object per call)
    vs the same with `jax.vmap`: target at most 2% of JAX's call, with and without a signature."""
    rounds = 30 if quick else 1500
    x, y, z = einsum_arrays()

    def jax_inline() -> object:
        return jax.vmap(complex_operation, in_axes=AXES)(x, y, z).block_until_ready()

    def ax_inline(sig: str | None) -> object:
        return ax.vmap(complex_operation, in_axes=AXES, signature=sig)(x, y, z).block_until_ready()

    data: dict[str, float] = {}
    rows = []
    for sig in (None, EINSUM):
        tag = "sig" if sig else "nosig"
        pair = paired_us(jax_inline, partial(ax_inline, sig), rounds)
        data[f"{tag}_jax_us"], data[f"{tag}_ax_us"], data[f"{tag}_overhead_us"] = pair
        rows.append(share_row("inline eager ax.vmap(f, ...)(x, y, z)", pair, INLINE_SHARE, sig is not None))
    # A lambda written inline is a new function each time: nothing of it is cached.
    pair = paired_us(
        lambda: jax.vmap(lambda a, b, c: complex_operation(a, b, c), in_axes=AXES)(x, y, z).block_until_ready(),
        lambda: ax.vmap(lambda a, b, c: complex_operation(a, b, c), in_axes=AXES)(x, y, z).block_until_ready(),
        rounds,
    )
    data["lambda_jax_us"], data["lambda_ax_us"], data["lambda_overhead_us"] = pair
    rows.append(info_row("  the same with a new lambda each call", pair.jax, pair.ax, f"{pair.diff:+.1f} us", False))
    # axischeck's own time inline: JAX's vmap is still built, its eager call stubbed out
    # (a private name), so JAX's ~500 us of batching and its noise are not in it.
    out = jax.vmap(complex_operation, in_axes=AXES)(x, y, z)

    def stub(*args: object, **kwargs: object) -> jax.Array:
        return out

    def build_then_stub(fun: Callable[..., Any], *axes: Any, **options: Any) -> Callable[..., jax.Array]:
        real(fun, *axes, **options)
        return stub

    def own_us(make: Callable[[], Callable[..., jax.Array]], sig: str | None) -> tuple[float, float]:
        jax_own = median_us(lambda: (real(make(), in_axes=AXES), stub)[1](x, y, z), rounds * 10)
        ax_own = median_us(lambda: ax.vmap(make(), in_axes=AXES, signature=sig)(x, y, z), rounds * 10)
        return jax_own, ax_own

    kept = jax.vmap(complex_operation, in_axes=AXES)

    real = jax.vmap
    setattr(ax_vmap_module, "JAX_VMAP", build_then_stub)  # noqa: B010 - a private name, on purpose
    try:
        cases = (
            (lambda: complex_operation, "f", None),
            (lambda: complex_operation, "f", EINSUM),
            (lambda: lambda a, b, c: a, "a new lambda", None),
        )
        for make, what, sig in cases:
            jax_own, ax_own = own_us(make, sig)
            data[f"own_{what.replace(' ', '_')}{'_sig' if sig else ''}_us"] = ax_own - jax_own
            what_row = f"  its own time inline, {what} (JAX's call stubbed out)"
            rows.append(info_row(what_row, jax_own, ax_own, f"{ax_own - jax_own:+.1f} us", sig is not None))
        # The same own time next to JAX's eager call (run untimed before each round): what
        # the inline rows above pay, measured without that call's noise.
        for sig in (None, EINSUM):
            pair = next_to_us(
                lambda: kept(x, y, z).block_until_ready(),
                lambda: (real(complex_operation, in_axes=AXES), stub)[1](x, y, z),
                lambda: ax.vmap(complex_operation, in_axes=AXES, signature=sig)(x, y, z),  # noqa: B023 - called now
                rounds,
            )
            data[f"own_next_to_jax{'_sig' if sig else ''}_us"] = pair.diff
            what_row = "  its own time inline, f, next to JAX's eager call (JAX's call stubbed out)"
            rows.append(info_row(what_row, pair.jax, pair.ax, f"{pair.diff:+.1f} us", sig is not None))
    finally:
        setattr(ax_vmap_module, "JAX_VMAP", real)  # noqa: B010
    return data, rows


def bench_eager(quick: bool) -> Result:
    """Eager call of a kept `ax.vmap` vs a kept `jax.vmap`: target at most 2% of JAX's
    call, with and without a signature. Also axischeck's own time per call, without JAX's
    ~500 us of eager batching (and its noise) around it."""
    rounds = 30 if quick else 2000
    x, y, z = einsum_arrays()
    plain = jax.vmap(complex_operation, in_axes=AXES)
    checked = ax.vmap(complex_operation, in_axes=AXES, signature=EINSUM)
    inferred = ax.vmap(complex_operation, in_axes=AXES)
    data: dict[str, float] = {}
    rows = []

    def call(fn: Callable[[jax.Array, jax.Array, jax.Array], jax.Array]) -> object:
        return fn(x, y, z).block_until_ready()

    for tag, fn in (("sig", checked), ("nosig", inferred)):
        pair = paired_us(partial(call, plain), partial(call, fn), rounds)
        data[f"{tag}_jax_us"], data[f"{tag}_ax_us"], data[f"{tag}_overhead_us"] = pair
        rows.append(share_row("eager call of a kept ax.vmap", pair, CHECK_SHARE, tag == "sig"))
    # What any Python code costs next to JAX's eager call: a loop that takes about as
    # long as axischeck's own time when run in a tight loop, run before the same call.
    table = {f"k{i}": i for i in range(64)}
    keys = list(table)[:56]

    def python_work() -> int:
        return sum(table[k] for k in keys)

    hot = median_us(python_work, rounds * 50)
    pair = paired_us(partial(call, plain), lambda: (python_work(), call(plain)), rounds)
    data["python_work_hot_us"], data["python_work_in_context_us"] = hot, pair.diff
    rows.append(
        info_row(f"  info: {hot:.1f} us of plain Python (hot), before the same call", NAN, NAN, f"{pair.diff:+.1f} us")
    )
    # The least a drop-in's check can do, written as one plain function: read the
    # arguments' shapes, one dict lookup, compare the output's shape. The floor under the
    # target with a signature (a trivial wrapper class alone costs about as much).
    out = plain(x, y, z)
    known = {tuple(a.shape for a in (x, y, z)): out.shape}

    def least_check(*args: jax.Array) -> jax.Array:
        want = known.get(tuple([a.shape for a in args]))
        result = plain(*args)
        if result.shape != want:
            raise AssertionError("the output's shape is not the one known for these arguments")
        return result

    pair = paired_us(partial(call, plain), partial(call, least_check), rounds)
    data["least_check_in_context_us"] = pair.diff
    rows.append(
        info_row(
            "  info: the least check (3 shapes, a lookup, the output's shape), same call",
            NAN,
            NAN,
            f"{pair.diff:+.1f} us",
        )
    )
    # axischeck's own time per call: the same transform with JAX's call stubbed out
    # (a private attribute), so JAX's eager batching and its noise are not in it.
    for tag, sig in (("sig", EINSUM), ("nosig", None)):
        shell = ax.vmap(complex_operation, in_axes=AXES, signature=sig)
        shell(x, y, z)
        shell._jax_call = lambda *args, **kwargs: out  # what the call runs JAX's transform through
        own = median_us(partial(shell, x, y, z), rounds * 50)
        data[f"{tag}_own_time_us"] = own
        rows.append(info_row("  its own time (JAX's call stubbed out)", NAN, own, "", sig is not None))
    return data, rows


# ------------------------------------------------------------------ 4. predict


def bench_predict(quick: bool) -> Result:
    """`predict` vs `jax.eval_shape` of a `jax.vmap` built fresh, each side on the same kind
    of shapes. Targets: first sight of a new transform (a new decorator each round, shapes
    never seen) >= 50x faster with a signature, <= 1.2x eval_shape without; repeated shapes
    (cached) >= 300x faster with a signature, >= 100x without. Info: a new *function*
    each round (nothing of it cached anywhere)."""
    rounds = 20 if quick else 1000
    slow_rounds = 10 if quick else 200  # JAX's eval_shape and traces take ~1 ms each

    def stream(n: int) -> Iterator[tuple[jax.ShapeDtypeStruct, ...]]:
        return iter([new_einsum_args() for _ in range(n + 5)])  # built beforehand, on both sides

    def jax_new(
        make_fun: Callable[[], Callable[..., jax.Array]], shapes: Iterator[tuple[jax.ShapeDtypeStruct, ...]]
    ) -> object:
        return jax.eval_shape(jax.vmap(make_fun(), in_axes=AXES), *next(shapes))

    def ax_new(
        make_fun: Callable[[], Callable[..., jax.Array]],
        sig: str | None,
        shapes: Iterator[tuple[jax.ShapeDtypeStruct, ...]],
    ) -> object:
        return ax.vmap(make_fun(), in_axes=AXES, signature=sig).predict(*next(shapes))

    data: dict[str, float] = {}
    rows = []
    fresh_new = median_us(partial(jax_new, lambda: complex_operation, stream(slow_rounds)), slow_rounds)
    args = (sds(16, 8, 4), sds(4, 16, 2), sds(16, 8, 2))
    fresh_same = median_us(lambda: jax.eval_shape(jax.vmap(complex_operation, in_axes=AXES), *args), slow_rounds)
    kept = jax.vmap(complex_operation, in_axes=AXES)
    reused_same = median_us(lambda: jax.eval_shape(kept, *args), slow_rounds)
    data |= {
        "jax_eval_shape_fresh_vmap_new_shapes_us": fresh_new,
        "jax_eval_shape_fresh_vmap_same_shapes_us": fresh_same,
        "jax_eval_shape_kept_vmap_same_shapes_us": reused_same,
    }
    for sig in (EINSUM, None):
        tag = "sig" if sig else "nosig"
        n = rounds if sig else slow_rounds
        first = median_us(partial(ax_new, lambda: complex_operation, sig, stream(n)), n)
        repeated = median_us(
            partial(ax.vmap(complex_operation, in_axes=AXES, signature=sig).predict, *args), rounds * 10
        )
        cold = median_us(partial(ax_new, new_function, sig, stream(slow_rounds)), slow_rounds)
        jax_cold = median_us(partial(jax_new, new_function, stream(slow_rounds)), slow_rounds)
        data |= {
            f"{tag}_first_sight_new_transform_us": first,
            f"{tag}_repeated_us": repeated,
            f"{tag}_new_function_us": cold,
            f"jax_eval_shape_new_function_{tag}_round_us": jax_cold,
        }
        what = "predict, new transform + new shapes"
        if sig:
            rows.append(speedup_row(what, fresh_new, first, 30, True))
            rows.append(speedup_row("predict, repeated shapes (cached)", fresh_same, repeated, 300, True))
        else:
            rows.append(ratio_row(what, fresh_new, first, 1.2, False))
            rows.append(speedup_row("predict, repeated shapes (cached)", fresh_same, repeated, 100, False))
        rows.append(info_row("  info: a new function + new shapes", jax_cold, cold, fmt_x(cold / jax_cold), bool(sig)))
    data["sig_speedup_first_sight"] = fresh_new / data["sig_first_sight_new_transform_us"]
    data["sig_speedup_repeated"] = fresh_same / data["sig_repeated_us"]
    data["nosig_ratio_first_sight"] = data["nosig_first_sight_new_transform_us"] / fresh_new
    data["nosig_speedup_repeated"] = fresh_same / data["nosig_repeated_us"]
    return data, rows


# ------------------------------------------------------------------ 5. shard_map


def bench_shard_map(quick: bool) -> Result:
    """shard_map: `predict` for a 64-device mesh this machine lacks vs `jax.eval_shape` of a
    fresh `jax.shard_map` on that abstract mesh (new shapes on both sides): first sight,
    of a kept transform and of a new one, >= 20x faster. Calls on the local devices, eager
    and under jit (info)."""
    rounds = 20 if quick else 1000
    slow_rounds = 10 if quick else 200
    big = AbstractMesh((64,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    sizes = itertools.count(1)

    def stream(n: int) -> Iterator[tuple[jax.ShapeDtypeStruct, jax.ShapeDtypeStruct]]:
        return iter([(sds(64 * next(sizes), 16), sds(16, 8)) for _ in range(n + 5)])

    jax_args = stream(slow_rounds)
    fresh = median_us(
        lambda: jax.eval_shape(jax.shard_map(block, mesh=big, **BLOCK_SPECS), *next(jax_args)), slow_rounds
    )
    planned = ax.shard_map(block, mesh={"x": 64}, signature=BLOCK, **BLOCK_SPECS)
    kept_args = stream(rounds)
    first_kept = median_us(lambda: planned.predict(*next(kept_args)), rounds)
    new_args = stream(rounds)
    first_new = median_us(
        lambda: ax.shard_map(block, mesh={"x": 64}, signature=BLOCK, **BLOCK_SPECS).predict(*next(new_args)), rounds
    )
    a64, w = sds(64 * 32, 16), sds(16, 8)
    repeated = median_us(lambda: planned.predict(a64, w), rounds * 10)
    n = len(jax.devices())
    mesh = Mesh(jax.devices(), ("x",))
    plain = jax.shard_map(block, mesh=mesh, **BLOCK_SPECS)
    checked = ax.shard_map(block, mesh=mesh, signature=BLOCK, **BLOCK_SPECS)
    a, wa = jnp.ones((n * 32, 16)), jnp.ones((16, 8))
    # Eager shard_map costs JAX ~0.1 s a call on CPU: a few rounds are plenty.
    eager = paired_us(
        lambda: plain(a, wa).block_until_ready(),
        lambda: checked(a, wa).block_until_ready(),
        3 if quick else 20,
        warmup=1,
    )
    plain_jit, checked_jit = jax.jit(plain), jax.jit(checked)
    jit = paired_us(
        lambda: plain_jit(a, wa).block_until_ready(), lambda: checked_jit(a, wa).block_until_ready(), rounds * 4
    )
    data = {
        "jax_eval_shape_fresh_us": fresh,
        "predict_first_sight_kept_us": first_kept,
        "predict_first_sight_new_transform_us": first_new,
        "predict_repeated_us": repeated,
        "speedup_first_sight_kept": fresh / first_kept,
        "speedup_first_sight_new_transform": fresh / first_new,
        "eager_jax_us": eager.jax,
        "eager_ax_us": eager.ax,
        "jit_jax_us": jit.jax,
        "jit_ax_us": jit.ax,
        "devices": float(n),
    }
    rows = [
        speedup_row("shard_map predict, 64 devices, new shapes", fresh, first_kept, 20, True),
        speedup_row("shard_map predict, new transform + new shapes", fresh, first_new, 20, True),
        info_row("shard_map predict, repeated shapes", fresh, repeated, f"{fmt_x(fresh / repeated)} faster", True),
        info_row(f"eager shard_map call, {n} devices", eager.jax, eager.ax, fmt_x(eager.ax / eager.jax), True),
        info_row("jit(shard_map) steady state", jit.jax, jit.ax, fmt_x(jit.ax / jit.jax), True),
    ]
    return data, rows


# ------------------------------------------------------------------ 6. many leaves


def _leaf_timings(n: int, rounds: int) -> dict[str, float]:
    """Each leaves-group measurement at n leaves, in microseconds."""

    def f(x: jax.Array, params: dict[str, jax.Array]) -> jax.Array:
        return x

    names = [f"w{k:05d}" for k in range(n)]
    spec = {"x": "i", "params": dict.fromkeys(names, "o i"), "return": "i"}
    params = dict.fromkeys(names, sds(4, 3))
    bad = params | {names[n // 2]: sds(4, 5)}  # contradicts 'i' = 3
    batched = dict.fromkeys(names, sds(8, 4, 3))
    bad_batch = batched | {names[n // 2]: sds(9, 4, 3)}
    batch = itertools.count(2)  # a new batch size each time: no cached prediction

    def x() -> jax.ShapeDtypeStruct:
        return sds(next(batch), 3)

    checked = ax.vmap(f, in_axes=(0, None), signature=spec)
    inferred = ax.vmap(f, in_axes=(0, 0))
    plain = jax.vmap(f, in_axes=(0, None))
    out: dict[str, float] = {}
    out["signature"] = median_us(lambda: ax.Signature(spec), rounds, warmup=1)
    # A new function each time: nothing of it is cached (the signature is parsed anew).
    out["construct"] = median_us(lambda: ax.vmap(lambda x, params: x, in_axes=(0, None), signature=spec), rounds)
    sig = ax.Signature(spec)
    out["unify"] = median_us(lambda: sig.unify(x(), params), rounds, warmup=1)
    out["first_predict"] = once_us(lambda: checked.predict(x(), params))  # builds the plan, asks JAX once
    out["predict"] = median_us(lambda: checked.predict(x(), params), rounds, warmup=1)
    pred = checked.predict(x(), params)
    out["str_prediction"] = median_us(lambda: str(pred), rounds, warmup=0)
    out["explain"] = median_us(lambda: checked.explain(x(), params), rounds, warmup=0)
    out["error_signature"], _ = raised_us(lambda: checked.predict(x(), bad), rounds, warmup=0)
    out["error_batch"], _ = raised_us(lambda: inferred.predict(sds(8, 3), bad_batch), rounds, warmup=0)
    out["jax_eval_shape"] = median_us(lambda: jax.eval_shape(plain, x(), params), rounds, warmup=0)
    out["jax_error_batch"], _ = raised_us(
        lambda: jax.eval_shape(jax.vmap(f, in_axes=(0, 0)), sds(8, 3), bad_batch), rounds, warmup=0
    )
    # The fix that error offers (in_axes=(0, None)) is verified by JAX tracing f per
    # example over every leaf (given one abstract value per distinct struct, which makes
    # JAX's part cheaper than this eval_shape of the structs themselves).
    out["jax_fix_trace"] = median_us(lambda: jax.eval_shape(f, sds(3), bad_batch), rounds, warmup=0)
    return out


def bench_leaves(quick: bool) -> Result:
    """Linear in leaves, on a params dict of n leaves against a pytree-of-dims signature:
    building the signature (alone, and with a new `ax.vmap`), unifying it with the
    arguments, predict (first sight of a batch size, kept transform), the
    derivation table (`str(pred)`, `f.explain`), and the error for one bad leaf among n
    (a dimension that contradicts the signature; a batch size, without a signature):
    target under 0.2 s each at 16k leaves, with the time per leaf at each size. Also
    parsing a 5000-input gufunc string vs a 500-input one: per input within 2x."""
    sizes = [100, 1000] if quick else [1000, 16000]
    data: dict[str, float] = {}
    for n in sizes:
        for key, us in _leaf_timings(n, rounds=3).items():  # medians: one collection can double a sample
            data[f"{key}_{n}_us"] = us
            data[f"{key}_{n}_us_per_leaf"] = us / n
    rows = []
    small, large = sizes
    judged = large >= 16000  # the target is for 16k leaves; --quick stops short of it
    jax_for = {"predict": "jax_eval_shape", "error_batch": "jax_error_batch"}
    labels = {
        "signature": ("build the pytree-of-dims Signature", True),
        "construct": ("ax.vmap(new f, signature=that pytree)", True),
        "unify": ("Signature.unify(x, params)", True),
        "predict": ("predict, new batch size", True),
        "str_prediction": ("derivation table: str(prediction)", True),
        "explain": ("derivation table: f.explain(...)", True),
        "error_signature": ("error: one leaf contradicts the signature", True),
        "error_batch": ("error: one leaf has another batch size", False),
    }
    for key, (label, sig) in labels.items():
        us = data[f"{key}_{large}_us"]
        per = f"{data[f'{key}_{small}_us_per_leaf']:.2f} -> {data[f'{key}_{large}_us_per_leaf']:.2f} us/leaf"
        jax_us = data[f"{jax_for[key]}_{large}_us"] if key in jax_for else NAN
        met = us < 0.2e6 if judged else None
        rows.append(Row(f"{large} leaves: {label}", fmt_us(jax_us), fmt_us(us), per, "< 0.2 s", met, sig))
    trace = data[f"jax_fix_trace_{large}_us"]
    error = data[f"error_batch_{large}_us"]
    rows.append(
        info_row(
            "  the fix it offers needs f traced per example: jax.eval_shape of that",
            trace,
            NAN,
            f"the error is {fmt_x(error / trace)} that",
            False,
        )
    )
    parse: dict[int, float] = {}
    for n in (500, 5000):
        text = ",".join(f"(a{i},b)" for i in range(n)) + "->()"
        parse[n] = median_us(partial(ax.Signature, text), 3 if quick else 7, warmup=1)
        data[f"parse_{n}_inputs_us"] = parse[n]
    growth = (parse[5000] / 5000) / (parse[500] / 500)
    data["parse_per_input_growth"] = growth
    rows.append(
        Row(
            "parse a 5000-input gufunc signature (vs 500)",
            "-",
            fmt_us(parse[5000]),
            f"{parse[500] / 500:.1f} -> {parse[5000] / 5000:.1f} us/input",
            "per input <= 2x",
            growth <= 2,
            None,
        )
    )
    return data, rows


# ------------------------------------------------------------------ 7. failures


def bench_failure(quick: bool) -> Result:
    """The failure path: the time to get axischeck's error (message rendered) for the einsum
    example with a wrong size, from `predict` and from a call, vs `jax.eval_shape` of the
    same `jax.vmap` on the same arguments (which raises too): target <= 3x, with and
    without a signature. Without a signature a failing call raises JAX's own error with
    axischeck's note added (its type is in the row)."""
    rounds = 5 if quick else 50
    bad = (sds(16, 8, 4), sds(5, 16, 2), sds(16, 8, 2))
    bad_arrays = tuple(jnp.ones(s.shape) for s in bad)
    plain = jax.vmap(complex_operation, in_axes=AXES)
    jax_us, jax_kind = raised_us(lambda: jax.eval_shape(plain, *bad), rounds)
    jax_call_us, _ = raised_us(lambda: plain(*bad_arrays), rounds)
    data = {"jax_eval_shape_us": jax_us, "jax_call_us": jax_call_us}
    rows = [info_row(f"jax: failing eager call ({jax_kind})", jax_call_us, NAN)]
    for sig in (EINSUM, None):
        tag = "sig" if sig else "nosig"
        checked = ax.vmap(complex_operation, in_axes=AXES, signature=sig)
        predict_us, predict_kind = raised_us(partial(checked.predict, *bad), rounds)
        call_us, call_kind = raised_us(partial(checked, *bad_arrays), rounds)
        data |= {f"{tag}_predict_us": predict_us, f"{tag}_call_us": call_us}
        rows.append(ratio_row(f"failing predict ({predict_kind})", jax_us, predict_us, 3, sig is not None))
        rows.append(ratio_row(f"failing call ({call_kind})", jax_us, call_us, 3, sig is not None))
    return data, rows


# ------------------------------------------------------------------ 8. a real model


def mlp_params(layers: int, width: int, seed: int = 0) -> list[dict[str, jax.Array]]:
    keys = jax.random.split(jax.random.PRNGKey(seed), layers)
    return [{"W": jax.random.normal(k, (width, width)) / width**0.5, "b": jnp.zeros(width)} for k in keys]


def mlp_loss(params: list[dict[str, jax.Array]], x: jax.Array, y: jax.Array) -> jax.Array:
    """Per-example loss: x and y of shape (width,)."""
    for layer in params:
        x = jnp.tanh(layer["W"] @ x + layer["b"])
    return jnp.mean((x - y) ** 2)


def batch_loss(params: list[dict[str, jax.Array]], xs: jax.Array, ys: jax.Array) -> jax.Array:
    for layer in params:
        xs = jnp.tanh(xs @ layer["W"].T + layer["b"])
    return jnp.mean((xs - ys) ** 2)


def make_train_step() -> Callable[..., tuple[list[dict[str, jax.Array]], jax.Array]]:
    """A data-parallel SGD step, new each time it is made (so pmap compiles it anew)."""

    def step(
        params: list[dict[str, jax.Array]], xs: jax.Array, ys: jax.Array
    ) -> tuple[list[dict[str, jax.Array]], jax.Array]:
        loss, grads = jax.value_and_grad(batch_loss)(params, xs, ys)
        grads = lax.pmean(grads, "batch")  # type: ignore[no-untyped-call]  # the same on every device
        new = jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
        return new, lax.pmean(loss, "batch")  # type: ignore[no-untyped-call]

    return step


def bench_model(quick: bool) -> Result:
    """A realistic model, axischeck vs JAX (info, except under jit: target <= 1.02x):
    per-example gradients of a 20-layer MLP (`vmap(jax.grad(loss), in_axes=(None, 0, 0))`,
    eager with and without a signature, and under jit); a data-parallel `pmap` SGD step
    with `lax.pmean` over a 200-leaf gradient tree and `out_axes=None` for the params:
    the first call (compiles) and the steady state. The pmean'd params do not depend on
    the device, so axischeck must not warn: an `AxisCheckWarning` here is an error."""
    layers, width, batch = (20, 16, 8) if quick else (20, 64, 32)
    params = mlp_params(layers, width)
    xs, ys = jnp.ones((batch, width)), jnp.zeros((batch, width))
    grad = jax.grad(mlp_loss)
    dims = [{"W": "h h", "b": "h"}] * layers
    sig = ax.Signature((dims, "h", "h"), output=dims)
    plain = jax.vmap(grad, in_axes=(None, 0, 0))

    def per_example(fn: Callable[..., Any]) -> object:
        return ready(fn(params, xs, ys))

    data: dict[str, float] = {}
    rows = []
    eager_rounds = 3 if quick else 50
    for tag, checked in (
        ("nosig", ax.vmap(grad, in_axes=(None, 0, 0))),
        ("sig", ax.vmap(grad, in_axes=(None, 0, 0), signature=sig)),
    ):
        pair = paired_us(partial(per_example, plain), partial(per_example, checked), eager_rounds, warmup=1)
        data[f"mlp_eager_{tag}_jax_us"], data[f"mlp_eager_{tag}_ax_us"], data[f"mlp_eager_{tag}_diff_us"] = pair
        what = f"MLP {layers} layers: per-example grads, eager"
        rows.append(info_row(what, pair.jax, pair.ax, f"{pair.diff:+.0f} us", tag == "sig"))
    plain_jit, checked_jit = jax.jit(plain), jax.jit(ax.vmap(grad, in_axes=(None, 0, 0)))
    jit = paired_us(
        lambda: ready(plain_jit(params, xs, ys)),
        lambda: ready(checked_jit(params, xs, ys)),
        20 if quick else 500,
    )
    data["mlp_jit_jax_us"], data["mlp_jit_ax_us"], _ = jit
    rows.append(ratio_row("  the same under jit, steady state", jit.jax, jit.ax, 1.02, False))

    n = len(jax.devices())
    depth = 10 if quick else 100  # two leaves (W, b) per layer
    pparams = mlp_params(depth, 16, seed=1)
    pxs, pys = jnp.ones((n, 4, 16)), jnp.zeros((n, 4, 16))
    options: dict[str, Any] = {"axis_name": "batch", "in_axes": (None, 0, 0), "out_axes": (None, None)}
    with warnings.catch_warnings():
        warnings.simplefilter("error", ax.AxisCheckWarning)
        first = paired_us(
            lambda: ready(jax.pmap(make_train_step(), **options)(pparams, pxs, pys)),
            lambda: ready(ax.pmap(make_train_step(), **options)(pparams, pxs, pys)),
            1 if quick else 4,
            warmup=1,
        )
        kept_jax, kept_ax = jax.pmap(make_train_step(), **options), ax.pmap(make_train_step(), **options)
        steady = paired_us(
            lambda: ready(kept_jax(pparams, pxs, pys)),
            lambda: ready(kept_ax(pparams, pxs, pys)),
            5 if quick else 100,
            warmup=2,
        )
    leaves = len(jax.tree_util.tree_leaves(pparams))
    data |= {"pmap_leaves": float(leaves), "pmap_devices": float(n)}
    data["pmap_first_jax_us"], data["pmap_first_ax_us"], _ = first
    data["pmap_steady_jax_us"], data["pmap_steady_ax_us"], data["pmap_steady_diff_us"] = steady
    what = f"pmap SGD step, {leaves}-leaf grads, {n} devices"
    rows.append(info_row(f"{what}: first call", first.jax, first.ax, fmt_x(first.ax / first.jax), False))
    rows.append(info_row(f"{what}: steady", steady.jax, steady.ax, f"{steady.diff:+.0f} us", False))
    return data, rows


def _mapped_grad(grad: Callable[..., Any], axes: Any, jitted: bool, vmap: Callable[..., Any]) -> Callable[..., Any]:
    """`vmap(grad, in_axes=axes)`, jitted or not, with a new function each time it is made
    (`grad` wrapped anew): no cache of JAX's or axischeck's knows it."""
    mapped = vmap(lambda *args: grad(*args), in_axes=axes)
    return jax.jit(mapped) if jitted else mapped


def _first_and_steady(
    make: Callable[[Callable[..., Any]], Callable[..., Any]], args: tuple[Any, ...], rounds: int, steady_rounds: int
) -> tuple[Paired, Paired]:
    """The first call of a transform made anew each round (`make(jax.vmap)` against
    `make(ax.vmap)`), and the steady state of one made once, paired."""
    first = paired_us(lambda: ready(make(jax.vmap)(*args)), lambda: ready(make(ax.vmap)(*args)), rounds, warmup=1)
    kept_jax, kept_ax = make(jax.vmap), make(ax.vmap)
    steady = paired_us(lambda: ready(kept_jax(*args)), lambda: ready(kept_ax(*args)), steady_rounds, warmup=2)
    return first, steady


def bench_draws(quick: bool) -> Result:
    """The check of random draws (`ax.SharedRandomnessWarning`) on the model group's
    workloads, axischeck vs JAX in the same run (info): the first call of a new function
    (JAX traces and compiles; axischeck also records the function inside JAX's trace and
    reads the record) and the steady state (the check is done: JAX's own call), for the
    20-layer MLP's per-example gradients (eager and under jit), the same with dropout whose
    keys are split per example (the record then holds samplers to read), and the
    data-parallel pmap SGD step. None of them shares a key: a warning here is an error.
    Also the analysis alone, on the recorded MLP jaxpr with dropout."""
    layers, width, batch = (20, 16, 8) if quick else (20, 64, 32)
    params = mlp_params(layers, width)
    xs, ys = jnp.ones((batch, width)), jnp.zeros((batch, width))
    keys = jax.random.split(jax.random.key(0), batch)
    rounds, steady_rounds = (1, 3) if quick else (4, 30)
    data: dict[str, float] = {}
    rows: list[Row] = []

    def dropout_loss(params: list[dict[str, jax.Array]], x: jax.Array, y: jax.Array, key: jax.Array) -> jax.Array:
        for k, layer in enumerate(params):
            x = jnp.tanh(layer["W"] @ x + layer["b"])
            x = jnp.where(jax.random.bernoulli(jax.random.fold_in(key, k), 0.9, x.shape), x / 0.9, 0.0)
        return jnp.mean((x - y) ** 2)

    def fresh(loss: Callable[..., jax.Array]) -> Callable[..., Any]:
        """`jax.grad(loss)` as a new function: no cache of JAX's or axischeck's knows it."""
        return jax.grad(lambda *args: loss(*args))

    cases: list[tuple[str, Callable[..., jax.Array], tuple[Any, ...], tuple[Any, ...], bool]] = [
        ("mlp", mlp_loss, (None, 0, 0), (params, xs, ys), False),
        ("mlp_jit", mlp_loss, (None, 0, 0), (params, xs, ys), True),
        ("dropout", dropout_loss, (None, 0, 0, 0), (params, xs, ys, keys), False),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ax.SharedRandomnessWarning)
        for tag, loss, axes, args, jitted in cases:
            first, steady = _first_and_steady(
                partial(_mapped_grad, fresh(loss), axes, jitted), args, rounds, steady_rounds
            )
            data[f"{tag}_first_jax_us"], data[f"{tag}_first_ax_us"], _ = first
            data[f"{tag}_steady_jax_us"], data[f"{tag}_steady_ax_us"], data[f"{tag}_steady_diff_us"] = steady
            what = {
                "mlp": f"MLP {layers} layers: per-example grads, eager",
                "mlp_jit": "  the same under jit",
                "dropout": f"MLP {layers} layers + dropout (keys split per example), eager",
            }[tag]
            rows.append(info_row(f"{what}: first call", first.jax, first.ax, fmt_x(first.ax / first.jax), False))
            rows.append(info_row(f"{what}: steady", steady.jax, steady.ax, f"{steady.diff:+.0f} us", False))

        n = len(jax.devices())
        pparams = mlp_params(10 if quick else 100, 16, seed=1)
        pxs, pys = jnp.ones((n, 4, 16)), jnp.zeros((n, 4, 16))
        options: dict[str, Any] = {"axis_name": "batch", "in_axes": (None, 0, 0), "out_axes": (None, None)}
        first = paired_us(
            lambda: ready(jax.pmap(make_train_step(), **options)(pparams, pxs, pys)),
            lambda: ready(ax.pmap(make_train_step(), **options)(pparams, pxs, pys)),
            rounds,
            warmup=1,
        )
        kept_jax, kept_ax = jax.pmap(make_train_step(), **options), ax.pmap(make_train_step(), **options)
        steady = paired_us(
            lambda: ready(kept_jax(pparams, pxs, pys)), lambda: ready(kept_ax(pparams, pxs, pys)), steady_rounds, 2
        )
    leaves = len(jax.tree_util.tree_leaves(pparams))
    data["pmap_first_jax_us"], data["pmap_first_ax_us"], _ = first
    data["pmap_steady_jax_us"], data["pmap_steady_ax_us"], data["pmap_steady_diff_us"] = steady
    what = f"pmap SGD step, {leaves}-leaf grads, {n} devices"
    rows.append(info_row(f"{what}: first call", first.jax, first.ax, fmt_x(first.ax / first.jax), False))
    rows.append(info_row(f"{what}: steady", steady.jax, steady.ax, f"{steady.diff:+.0f} us", False))

    # The analysis alone: reading the record of the MLP with dropout (its samplers, their
    # keys, the outputs they reach), as the first call does once JAX has answered.
    from axischeck._engine._randomness import MAPPED, shared_draws

    per_example = jax.make_jaxpr(jax.grad(dropout_loss))(params, xs[0], ys[0], keys[0])
    varying = [frozenset()] * len(jax.tree_util.tree_leaves(params)) + [frozenset({MAPPED})] * 3
    alone = median_us(lambda: shared_draws(per_example, varying, frozenset({MAPPED})), 5 if quick else 50, 1)
    data["analysis_us"], data["analysis_equations"] = alone, float(len(per_example.eqns))
    rows.append(
        info_row(
            f"  reading the record alone ({len(per_example.eqns)} top-level equations, dropout MLP)",
            NAN,
            alone,
        )
    )
    return data, rows


# ------------------------------------------------------------------ 9. memory


def rss_mb() -> float:
    """Resident set size now (Linux /proc), else the peak so far."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory_child(kind: str, side: str, n: int) -> dict[str, float]:
    """One side of one memory row, in a process of its own: RSS growth over `n` steps
    after a few warm-up steps. The steps are what JAX users do; the ax side does the same
    through axischeck."""
    use_ax = side == "ax"
    step: Callable[[int], object]
    if kind in ("predict_sig", "predict_nosig"):
        sig = EINSUM if kind == "predict_sig" else None
        checked = ax.vmap(complex_operation, in_axes=AXES, signature=sig)
        plain = jax.vmap(complex_operation, in_axes=AXES)
        step = (
            (lambda i: checked.predict(*new_einsum_args()))
            if use_ax
            else (lambda i: jax.eval_shape(plain, *new_einsum_args()))
        )
    elif kind == "inline":
        x, y, z = einsum_arrays()

        def step(i: int) -> object:  # a new function each time, as in a notebook cell run again
            fn = new_function()
            mapped = ax.vmap(fn, in_axes=AXES, signature=EINSUM) if use_ax else jax.vmap(fn, in_axes=AXES)
            return mapped(x, y, z).block_until_ready()

    elif kind == "train":
        params = mlp_params(4, 32)
        grads = (ax.vmap if use_ax else jax.vmap)(jax.grad(mlp_loss), in_axes=(None, 0, 0))
        state: dict[str, Any] = {"params": params, "key": jax.random.PRNGKey(0)}

        def step(i: int) -> object:  # new arrays every step: data, gradients, parameters
            key, kx, ky = jax.random.split(state["key"], 3)
            xs, ys = jax.random.normal(kx, (32, 32)), jax.random.normal(ky, (32, 32))
            g = grads(state["params"], xs, ys)
            state["params"] = jax.tree_util.tree_map(lambda p, d: p - 0.01 * d.mean(0), state["params"], g)
            state["key"] = key
            return ready(state["params"])

    else:
        raise ValueError(f"unknown memory row {kind!r}")
    for i in range(3):
        step(-i)
    gc.collect()
    before = rss_mb()
    t0 = time.perf_counter()
    for i in range(n):
        step(i)
    seconds = time.perf_counter() - t0
    gc.collect()
    after = rss_mb()
    return {"before_mb": before, "after_mb": after, "growth_mb": after - before, "seconds": seconds}


def bench_memory(quick: bool) -> Result:
    """RSS growth, each side in a fresh subprocess: 100k distinct predictions with a
    signature (10k without: each one traces) vs `jax.eval_shape` on the same shapes, and
    1000 inline constructions + calls of new functions vs `jax.vmap`'s: target within
    +50 MB of JAX's; a 60-step eager training loop: within 2x of JAX's (+1 MB, the noise
    of reading RSS)."""
    counts = (
        {"predict_sig": 500, "predict_nosig": 100, "inline": 50, "train": 10}
        if quick
        else {"predict_sig": 100_000, "predict_nosig": 10_000, "inline": 1000, "train": 60}
    )
    labels = {
        "predict_sig": "distinct predictions",
        "predict_nosig": "distinct predictions",
        "inline": "inline build + call, new function",
        "train": "eager training steps (MLP grads)",
    }
    data: dict[str, float] = {}
    rows = []
    for kind, n in counts.items():
        growth = {}
        for side in ("jax", "ax"):
            proc = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--memory-child", kind, side, str(n)],
                capture_output=True,
                text=True,
                check=True,
            )
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            for key, value in got.items():
                data[f"{kind}_{side}_{key}"] = value
            growth[side] = got["growth_mb"]
        j, a = growth["jax"], growth["ax"]
        what = f"RSS growth, {n} {labels[kind]}"
        sig = kind in ("predict_sig", "inline")
        if kind == "train":
            rows.append(
                Row(what, f"{j:.1f} MB", f"{a:.1f} MB", f"{a - j:+.1f} MB", "<= 2x (+1 MB)", a <= 2 * j + 1, False)
            )
        else:
            rows.append(Row(what, f"{j:.1f} MB", f"{a:.1f} MB", f"{a - j:+.1f} MB", "<= +50 MB", a - j <= 50, sig))
    return data, rows


# ------------------------------------------------------------------ 10. jit


def bench_jit(quick: bool) -> Result:
    """`jax.jit(ax.vmap(...))` vs `jax.jit(jax.vmap(...))` steady state: target <= 1.02x
    (the lowered program is the same; this measures dispatch), and no axischeck code run
    at all in the steady state (Python calls into the package counted while JAX runs the
    compiled call), which is why the ratio is 1.00x give or take this machine's noise."""
    x, y, z = einsum_arrays()
    plain = jax.jit(jax.vmap(complex_operation, in_axes=AXES))
    checked = jax.jit(ax.vmap(complex_operation, in_axes=AXES, signature=EINSUM))
    pair = paired_us(
        lambda: plain(x, y, z).block_until_ready(), lambda: checked(x, y, z).block_until_ready(), 80 if quick else 8000
    )
    ours = os.path.dirname(ax.__file__) + os.sep
    calls = 0

    def count(frame: Any, event: str, arg: object) -> None:
        nonlocal calls
        if event == "call" and frame.f_code.co_filename.startswith(ours):
            calls += 1

    steps = 100
    sys.setprofile(count)
    try:
        for _ in range(steps):
            checked(x, y, z).block_until_ready()
    finally:
        sys.setprofile(None)
    data = {"jit_jax_us": pair.jax, "jit_ax_us": pair.ax, "jit_ratio": pair.ax / pair.jax, "jit_ax_calls": calls}
    return data, [
        ratio_row("jit(ax.vmap) steady state", pair.jax, pair.ax, 1.02, True),
        Row(f"  axischeck functions run in {steps} steady-state calls", "-", str(calls), "", "0", calls == 0, True),
    ]


# ------------------------------------------------------------------ import, Monte Carlo, jaxtyping


def bench_import(quick: bool) -> Result:
    """`import axischeck` after `import jax`: target <= 50 ms.

    Whole-process times vary by +-200 ms here, far more than the quantity measured, so
    the overhead is read from `python -X importtime` (axischeck's own cumulative time,
    jax already imported), with bytecode caching on as users have it.
    """
    runs = 2 if quick else 7
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def one(code: str) -> tuple[float, float]:
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code], check=True, capture_output=True, text=True, env=env
        )
        wall = time.perf_counter() - t0
        own = [int(line.split("|")[1]) for line in proc.stderr.splitlines() if line.rstrip().endswith("| axischeck")]
        return wall, (own[0] / 1e3 if own else 0.0)

    one("import jax, axischeck")  # writes the bytecode cache
    jax_only = statistics.median(one("import jax")[0] for _ in range(runs))
    both = [one("import jax, axischeck") for _ in range(runs)]
    own_ms = statistics.median(own for _, own in both)
    data = {
        "import_jax_ms": jax_only * 1e3,
        "import_jax_axischeck_ms": statistics.median(w for w, _ in both) * 1e3,
        "import_overhead_ms": own_ms,
    }
    row = Row(
        "import axischeck after jax (jax: import jax)",
        f"{data['import_jax_ms']:.0f} ms",
        f"{own_ms:.0f} ms",
        "",
        "<= 50 ms",
        own_ms <= 50,
    )
    return data, [row]


def bench_monte_carlo(quick: bool) -> Result:
    """The seed article's example with the checker on: jit(ax.vmap) vs jit(jax.vmap), target
    <= 1.02x; the speed-up over the Python loop (the article claims 10-100x) is info."""
    rounds, n_keys = (2, 50) if quick else (20, 1000)

    def monte_carlo_pi_single(key: jax.Array, n_samples: int = 10000) -> jax.Array:
        k1, k2 = jax.random.split(key)
        xs = jax.random.uniform(k1, (n_samples,))
        ys = jax.random.uniform(k2, (n_samples,))
        return 4.0 * jnp.mean((xs**2 + ys**2) <= 1.0)

    keys = jax.random.split(jax.random.PRNGKey(1768780800062), n_keys)
    monte_carlo_pi_single(keys[0]).block_until_ready()  # warm the eager op caches
    loop = once_us(lambda: jnp.array([monte_carlo_pi_single(keys[i]) for i in range(n_keys)]).block_until_ready())
    plain = jax.jit(jax.vmap(monte_carlo_pi_single))
    checked = jax.jit(ax.vmap(monte_carlo_pi_single))
    pair = paired_us(lambda: plain(keys).block_until_ready(), lambda: checked(keys).block_until_ready(), rounds, 2)
    data = {
        "loop_ms": loop / 1e3,
        "jit_vmap_ms": pair.jax / 1e3,
        "jit_ax_vmap_ms": pair.ax / 1e3,
        "speedup_vs_loop": loop / pair.ax,
        "ratio_vs_jax": pair.ax / pair.jax,
    }
    rows = [
        ratio_row(f"Monte Carlo pi, {n_keys} keys: jit(ax.vmap)", pair.jax, pair.ax, 1.02, False),
        info_row("  Python loop vs jit(ax.vmap)", loop, pair.ax, f"{fmt_x(loop / pair.ax)} faster", False),
    ]
    return data, rows


def bench_jaxtyping(quick: bool) -> Result:
    """jaxtyping + beartype eager overhead on a tiny function vs `ax.check`'s (info; only
    when installed: `pip install -e '.[bench]'`)."""
    try:
        from beartype import beartype  # type: ignore[import-not-found, unused-ignore]
        from jaxtyping import Array, Float, jaxtyped
    except ImportError:
        return {}, [Row("jaxtyping + beartype: not installed", "", "", "pip install -e '.[bench]'", "", None)]

    def tiny(x: Float[Array, "n"]) -> Float[Array, "n"]:
        return x

    rounds = 100 if quick else 4000
    typed = jaxtyped(typechecker=beartype)(tiny)
    checked = ax.check(tiny, signature="n -> n")
    x = jnp.ones(3)
    base = median_us(lambda: tiny(x), rounds)
    jt, ac = median_us(lambda: typed(x), rounds) - base, median_us(lambda: checked(x), rounds) - base
    data = {"jaxtyping_overhead_us": jt, "axischeck_check_overhead_us": ac}
    return data, [info_row("eager overhead: jaxtyping+beartype vs ax.check", jt, ac, "", True)]


def bench_lint(quick: bool) -> Result:
    """`axischeck lint` over this repository's own src and tests: target >= 20k lines per
    second (a corpus of about 1M lines fetched from public projects runs at 60k-90k)."""
    from axischeck._lint import lint

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [os.path.join(root, "src"), os.path.join(root, "tests")]
    runs: list[float] = []
    lines = 0
    for _ in range(1 if quick else 5):
        t0 = time.perf_counter()
        _, stats = lint(paths, use_config=False)
        runs.append(time.perf_counter() - t0)
        lines = stats.lines
    rate = lines / statistics.median(runs)
    data = {"lint_lines": float(lines), "lint_lines_per_s": rate}
    row = Row(
        f"axischeck lint, {lines} lines", "-", f"{rate / 1e3:.0f}k lines/s", "", ">= 20k lines/s", rate >= 20e3, None
    )
    return data, [row]


# ------------------------------------------------------------------ driver

GROUPS: dict[str, Callable[[bool], Result]] = {
    "construct": bench_construct,
    "inline": bench_inline,
    "eager": bench_eager,
    "predict": bench_predict,
    "shard_map": bench_shard_map,
    "leaves": bench_leaves,
    "failure": bench_failure,
    "model": bench_model,
    "draws": bench_draws,
    "memory": bench_memory,
    "jit": bench_jit,
    "import": bench_import,
    "monte_carlo": bench_monte_carlo,
    "jaxtyping": bench_jaxtyping,
    "lint": bench_lint,
}

HEADER = ("what", "jax", "axischeck", "ratio", "target", "met?")


def _met(met: bool | None) -> str:
    return "" if met is None else "yes" if met else "NO"


def _sig(row: Row) -> str:
    return "" if row.signature is None else " (signature)" if row.signature else " (no signature)"


def text_table(tables: dict[str, list[Row]]) -> str:
    cells = [[r.what + _sig(r), r.jax, r.ax, r.ratio, r.target, _met(r.met)] for rows in tables.values() for r in rows]
    widths = [max(len(c[i]) for c in [list(HEADER), *cells]) for i in range(len(HEADER))]

    def line(c: list[str] | tuple[str, ...]) -> str:
        return "  ".join(
            [c[0].ljust(widths[0]), *(v.rjust(w) for v, w in zip(c[1:3], widths[1:3], strict=True))]
            + [c[3].ljust(widths[3]), c[4].ljust(widths[4]), c[5]]
        ).rstrip()

    out = [line(HEADER)]
    for name, rows in tables.items():
        out.append(f"-- {name}")
        out += [line([r.what + _sig(r), r.jax, r.ax, r.ratio, r.target, _met(r.met)]) for r in rows]
    return "\n".join(out)


def markdown_table(tables: dict[str, list[Row]]) -> str:
    """The README's table: what | jax | axischeck | ratio | target | signature | met."""
    lines = ["| what | jax | axischeck | ratio | target | signature | met |", "|---|---|---|---|---|---|---|"]
    for rows in tables.values():
        for r in rows:
            sig = "" if r.signature is None else "yes" if r.signature else "no"
            lines.append(f"| {r.what.strip()} | {r.jax} | {r.ax} | {r.ratio} | {r.target} | {sig} | {_met(r.met)} |")
    return "\n".join(lines) + "\n"


def _run_group(name: str, quick: bool) -> dict[str, Any]:
    """One group's measurements and rows, as JSON-ready values."""
    t0 = time.perf_counter()
    data, rows = GROUPS[name](quick)
    return {"data": data | {"seconds": time.perf_counter() - t0}, "rows": [asdict(r) for r in rows]}


def _group_in_child(name: str, quick: bool) -> dict[str, Any]:
    """`_run_group` in a fresh process: a group's rows do not depend on what the groups
    before it left behind. Run after them in one process, the 16k-leaf rows took 1.5x as
    long on both sides (JAX's `eval_shape` 159 -> 245 ms): a heap of their garbage makes
    each full collection slower, and their warm caches could flatter a later group."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, f"{name}.json")
        cmd = [sys.executable, os.path.abspath(__file__), "--group-child", name, out] + (["--quick"] if quick else [])
        subprocess.run(cmd, check=True)
        with open(out) as fh:
            result: dict[str, Any] = json.load(fh)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--quick", action="store_true", help="few rounds, small sizes (CI: keeps the script from rotting)"
    )
    parser.add_argument("--only", metavar="GROUP[,GROUP]", help=f"run only these groups: {', '.join(GROUPS)}")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown")
    parser.add_argument(
        "--one-process",
        action="store_true",
        help="run every group in this process (for profiling): each group then inherits the"
        " heap, caches and collector state the groups before it left",
    )
    parser.add_argument("--memory-child", nargs=3, metavar=("KIND", "SIDE", "N"), help=argparse.SUPPRESS)
    parser.add_argument("--group-child", nargs=2, metavar=("GROUP", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        kind, side, n = args.memory_child
        print(json.dumps(memory_child(kind, side, int(n))))
        return 0
    if args.group_child:
        name, path = args.group_child
        with open(path, "w") as fh:
            json.dump(_run_group(name, args.quick), fh)
        return 0
    names = list(GROUPS) if args.only is None else [g.strip() for g in args.only.split(",") if g.strip()]
    unknown = [g for g in names if g not in GROUPS]
    if unknown:
        parser.error(f"unknown group(s) {', '.join(unknown)}; choose from {', '.join(GROUPS)}")
    results: dict[str, Any] = {
        "jax": jax.__version__,
        "axischeck": ax.__version__,
        "quick": args.quick,
        "devices": len(jax.devices()),
    }
    tables: dict[str, list[Row]] = {}
    for name in names:
        done = _run_group(name, args.quick) if args.one_process else _group_in_child(name, args.quick)
        results[name] = done["data"]
        tables[name] = [Row(**row) for row in done["rows"]]
    results["table"] = [{"group": g, **asdict(r)} for g, rows in tables.items() for r in rows]
    mode = " (quick mode: few rounds, small sizes)" if args.quick else ""
    print(f"axischeck {ax.__version__} vs jax {jax.__version__}, {len(jax.devices())} CPU devices{mode}")
    print(text_table(tables))
    judged = [r for rows in tables.values() for r in rows if r.met is not None]
    missed = [f"{r.what.strip()}{_sig(r)}" for r in judged if not r.met]
    print(
        f"targets met: {len(judged) - len(missed)} of {len(judged)}"
        + (f"; missed: {'; '.join(missed)}" if missed else "")
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(markdown_table(tables))
    return 0


if __name__ == "__main__":
    sys.exit(main())

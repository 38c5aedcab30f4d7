"""axischeck benchmarks: every measurement side by side with plain JAX, in one run.

    python benchmarks/bench.py            # full run (the numbers in the README)
    python benchmarks/bench.py --quick    # a few rounds, for CI (asserts nothing)
    python benchmarks/bench.py --json out.json

Medians over repeated rounds, warm-up excluded; ratios compare measurements taken in
this same process, interleaved where two things are compared directly.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

import axischeck as ax

EINSUM = "(a,b),(b,c),(a,c)->(a,c)"


def complex_operation(x: jax.Array, y: jax.Array, z: jax.Array) -> jax.Array:
    return jnp.einsum("ab,bc->ac", x, y) + z


def median_us(fn: Callable[[], object], rounds: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def interleaved_us(
    a: Callable[[], object], b: Callable[[], object], rounds: int, warmup: int = 5
) -> tuple[float, float]:
    for _ in range(warmup):
        a()
        b()
    ta, tb = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        a()
        t1 = time.perf_counter()
        b()
        t2 = time.perf_counter()
        ta.append(t1 - t0)
        tb.append(t2 - t1)
    return statistics.median(ta) * 1e6, statistics.median(tb) * 1e6


def sds(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def bench_predict(rounds: int) -> dict[str, float]:
    """Target: >= 50x eval_shape of a fresh jax.vmap on first sight; >= 300x when repeated."""
    checked = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM)
    # A batch size never seen before each round: a cache miss every time. The structs
    # are built beforehand, as the baseline's are.
    fresh_args = iter([(sds(b, 8, 4), sds(4, b, 2), sds(b, 8, 2)) for b in range(1, rounds + 10)])

    def first_sight() -> object:
        return checked.predict(*next(fresh_args))

    args = (sds(16, 8, 4), sds(4, 16, 2), sds(16, 8, 2))
    fresh = median_us(
        lambda: jax.eval_shape(jax.vmap(complex_operation, in_axes=(0, 1, 0)), *args), max(rounds // 10, 20)
    )
    reused_vf = jax.vmap(complex_operation, in_axes=(0, 1, 0))
    reused = median_us(lambda: jax.eval_shape(reused_vf, *args), max(rounds // 10, 20))
    miss = median_us(first_sight, rounds)
    hit = median_us(lambda: checked.predict(*args), rounds)
    return {
        "eval_shape_fresh_vmap_us": fresh,
        "eval_shape_reused_vmap_us": reused,
        "predict_first_sight_us": miss,
        "predict_repeated_us": hit,
        "speedup_first_sight": fresh / miss,
        "speedup_repeated": fresh / hit,
    }


def bench_eager(rounds: int) -> dict[str, float]:
    """Target: checked eager call at most 5 us over plain jax.vmap (median)."""
    x, y, z = jnp.ones((16, 8, 4)), jnp.ones((4, 16, 2)), jnp.ones((16, 8, 2))
    plain = jax.vmap(complex_operation, in_axes=(0, 1, 0))
    checked = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM)
    inferred = ax.vmap(complex_operation, in_axes=(0, 1, 0))
    p, c = interleaved_us(
        lambda: plain(x, y, z).block_until_ready(), lambda: checked(x, y, z).block_until_ready(), rounds
    )
    p2, i = interleaved_us(
        lambda: plain(x, y, z).block_until_ready(), lambda: inferred(x, y, z).block_until_ready(), rounds
    )
    # The overhead itself, without JAX's ~500 us of eager batching noise around it:
    flat = jax.tree_util.tree_flatten(((x, y, z), {}))
    pre = median_us(lambda: checked._predictor.answer((x, y, z), {}, flat), rounds * 4)
    out = plain(x, y, z)
    pred = checked._predictor.answer((x, y, z), {}, flat)
    ver = median_us(lambda: checked._verify(out, pred, (x, y, z), {}), rounds * 4)
    return {
        "plain_eager_us": p,
        "checked_eager_us": c,
        "checked_overhead_us": c - p,
        "checked_ratio": c / p,
        "inferred_eager_us": i,
        "inferred_overhead_us": i - p2,
        "check_before_us": pre,
        "verify_after_us": ver,
        "check_total_us": pre + ver,
    }


def bench_jit(rounds: int) -> dict[str, float]:
    """Target: jitted steady state of a checked function within 2% of the unchecked one."""
    x, y, z = jnp.ones((16, 8, 4)), jnp.ones((4, 16, 2)), jnp.ones((16, 8, 2))
    plain = jax.jit(jax.vmap(complex_operation, in_axes=(0, 1, 0)))
    checked = jax.jit(ax.vmap(complex_operation, in_axes=(0, 1, 0), signature=EINSUM))
    p, c = interleaved_us(
        lambda: plain(x, y, z).block_until_ready(), lambda: checked(x, y, z).block_until_ready(), rounds * 4
    )
    return {"jit_plain_us": p, "jit_checked_us": c, "jit_ratio": c / p}


def bench_shard_map(rounds: int) -> dict[str, float]:
    """shard_map: predict for a 64-device mesh this machine lacks; calls on the local devices."""
    from jax.sharding import AbstractMesh, Mesh
    from jax.sharding import PartitionSpec as P

    def block(a: jax.Array, w: jax.Array) -> jax.Array:
        return jnp.tanh(a @ w)

    specs = {"in_specs": (P("x", None), P()), "out_specs": P("x", None)}
    big = AbstractMesh((64,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    a64, w = sds(64 * 32, 16), sds(16, 8)
    planned = ax.shard_map(block, mesh={"x": 64}, signature="(n,k),(k,m)->(n,m)", **specs)
    first = iter(range(1, 10**9))
    first_us = median_us(lambda: planned.predict(sds(64 * next(first), 16), w), rounds)
    repeated_us = median_us(lambda: planned.predict(a64, w), rounds * 4)
    fresh_us = median_us(lambda: jax.eval_shape(jax.shard_map(block, mesh=big, **specs), a64, w), max(rounds // 10, 20))
    n = len(jax.devices())
    mesh = Mesh(jax.devices(), ("x",))
    plain = jax.shard_map(block, mesh=mesh, **specs)
    checked = ax.shard_map(block, mesh=mesh, signature="(n,k),(k,m)->(n,m)", **specs)
    a, wa = jnp.ones((n * 32, 16)), jnp.ones((16, 8))
    # Eager shard_map costs JAX ~0.15 s a call on CPU: a few rounds are plenty.
    p, c = interleaved_us(
        lambda: plain(a, wa).block_until_ready(),
        lambda: checked(a, wa).block_until_ready(),
        max(rounds // 50, 5),
        warmup=2,
    )
    plain_jit, checked_jit = jax.jit(plain), jax.jit(checked)
    jp, jc = interleaved_us(
        lambda: plain_jit(a, wa).block_until_ready(), lambda: checked_jit(a, wa).block_until_ready(), rounds * 4
    )
    return {
        "sm_predict_first_sight_us": first_us,
        "sm_predict_repeated_us": repeated_us,
        "sm_eval_shape_fresh_us": fresh_us,
        "sm_speedup_first_sight": fresh_us / first_us,
        "sm_eager_plain_us": p,
        "sm_eager_checked_us": c,
        "sm_eager_ratio": c / p,
        "sm_jit_ratio": jc / jp,
        "sm_devices": float(n),
    }


def bench_scale(rounds: int, leaf_counts: list[int]) -> dict[str, float]:
    """Target: linear in leaves; 10,000 leaves under 20 ms."""
    out: dict[str, float] = {}

    def f(x: jax.Array, params: dict[str, jax.Array]) -> jax.Array:
        return x

    checked = ax.vmap(f, in_axes=(0, None), signature={"x": "i", "params": None, "return": "i"})
    for n in leaf_counts:
        params = {f"w{k:05d}": sds(4, 3) for k in range(n)}
        r = max(rounds // (1 + n // 100), 5)
        xs = iter([sds(b, 5) for b in range(1, r + 10)])  # a new batch size each round
        us = median_us(lambda xs=xs, params=params: checked.predict(next(xs), params), r)
        out[f"predict_{n}_leaves_us"] = us
        out[f"predict_{n}_leaves_us_per_leaf"] = us / n
    return out


def bench_import(runs: int) -> dict[str, float]:
    """Target: import axischeck adds at most 50 ms on top of import jax.

    Whole-process times vary by +-200 ms here, far more than the quantity measured, so
    the overhead is read from `python -X importtime` (axischeck's own cumulative time,
    jax already imported), with bytecode caching on as users have it.
    """
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
    return {
        "import_jax_ms": jax_only * 1e3,
        "import_jax_axischeck_ms": statistics.median(w for w, _ in both) * 1e3,
        "import_overhead_ms": statistics.median(own for _, own in both),
    }


def bench_monte_carlo(rounds: int, n_keys: int) -> dict[str, float]:
    """The seed's claim with the checker on: jit(ax.vmap) >= 10x the Python loop, within 2% of jit(jax.vmap)."""

    def monte_carlo_pi_single(key: jax.Array, n_samples: int = 10000) -> jax.Array:
        k1, k2 = jax.random.split(key)
        xs = jax.random.uniform(k1, (n_samples,))
        ys = jax.random.uniform(k2, (n_samples,))
        return 4.0 * jnp.mean((xs**2 + ys**2) <= 1.0)

    keys = jax.random.split(jax.random.PRNGKey(1768780800062), n_keys)
    monte_carlo_pi_single(keys[0]).block_until_ready()  # warm the eager op caches
    t0 = time.perf_counter()
    jnp.array([monte_carlo_pi_single(keys[i]) for i in range(n_keys)]).block_until_ready()
    loop = time.perf_counter() - t0
    plain = jax.jit(jax.vmap(monte_carlo_pi_single))
    checked = jax.jit(ax.vmap(monte_carlo_pi_single))
    p, c = interleaved_us(
        lambda: plain(keys).block_until_ready(), lambda: checked(keys).block_until_ready(), rounds, warmup=2
    )
    return {
        "loop_ms": loop * 1e3,
        "jit_vmap_ms": p / 1e3,
        "jit_ax_vmap_ms": c / 1e3,
        "speedup_vs_loop": loop * 1e6 / c,
        "ratio_vs_jax": c / p,
    }


def bench_jaxtyping(rounds: int) -> dict[str, float] | None:
    """jaxtyping + beartype eager overhead on a tiny function, when installed (extra: bench)."""
    try:
        from beartype import beartype
        from jaxtyping import Array, Float, jaxtyped
    except ImportError:
        return None

    def tiny(x: Float[Array, "n"]) -> Float[Array, "n"]:
        return x

    typed = jaxtyped(typechecker=beartype)(tiny)
    checked = ax.check(tiny, signature="n -> n")
    x = jnp.ones(3)
    base = median_us(lambda: tiny(x), rounds * 4)
    return {
        "jaxtyping_overhead_us": median_us(lambda: typed(x), rounds * 4) - base,
        "axischeck_check_overhead_us": median_us(lambda: checked(x), rounds * 4) - base,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="few rounds (CI: keeps the script from rotting)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args(argv)
    q = args.quick
    rounds = 20 if q else 2000
    results: dict[str, Any] = {"jax": jax.__version__, "axischeck": ax.__version__, "quick": q}
    results["predict"] = bench_predict(rounds)
    results["eager"] = bench_eager(20 if q else 1000)
    results["jit"] = bench_jit(20 if q else 2000)
    results["shard_map"] = bench_shard_map(20 if q else 1000)
    results["scale"] = bench_scale(rounds, [10, 100] if q else [10, 100, 1000, 10000])
    results["import"] = bench_import(2 if q else 7)
    results["monte_carlo"] = bench_monte_carlo(2 if q else 20, 50 if q else 1000)
    jt = bench_jaxtyping(20 if q else 1000)
    if jt is not None:
        results["jaxtyping"] = jt

    p, e, j, s, i, m = (results[k] for k in ("predict", "eager", "jit", "scale", "import", "monte_carlo"))
    rows = [
        ("eval_shape(jax.vmap(f) built fresh)", f"{p['eval_shape_fresh_vmap_us']:.1f} us", ""),
        ("eval_shape(jax.vmap(f) reused)", f"{p['eval_shape_reused_vmap_us']:.1f} us", ""),
        (
            "ax predict, first sight of shapes",
            f"{p['predict_first_sight_us']:.1f} us",
            f"{p['speedup_first_sight']:.0f}x faster (target >= 50x)",
        ),
        (
            "ax predict, repeated shapes",
            f"{p['predict_repeated_us']:.2f} us",
            f"{p['speedup_repeated']:.0f}x faster (target >= 300x)",
        ),
        ("eager jax.vmap call", f"{e['plain_eager_us']:.0f} us", ""),
        ("eager ax.vmap call (signature)", f"{e['checked_eager_us']:.0f} us", f"ratio {e['checked_ratio']:.3f}"),
        (
            "  its checks: before + after",
            f"{e['check_total_us']:.2f} us",
            f"{e['check_before_us']:.2f} + {e['verify_after_us']:.2f} (target <= 5 us)",
        ),
        ("eager ax.vmap call (inferred)", f"{e['inferred_eager_us']:.0f} us", f"+{e['inferred_overhead_us']:.1f} us"),
        ("jit(jax.vmap) steady state", f"{j['jit_plain_us']:.1f} us", ""),
        ("jit(ax.vmap) steady state", f"{j['jit_checked_us']:.1f} us", f"ratio {j['jit_ratio']:.3f} (target <= 1.02)"),
    ]
    sm = results["shard_map"]
    rows += [
        ("eval_shape(jax.shard_map), 64-device mesh", f"{sm['sm_eval_shape_fresh_us']:.0f} us", ""),
        (
            "ax.shard_map predict, first sight",
            f"{sm['sm_predict_first_sight_us']:.1f} us",
            f"{sm['sm_speedup_first_sight']:.0f}x faster",
        ),
        ("ax.shard_map predict, repeated", f"{sm['sm_predict_repeated_us']:.2f} us", ""),
        (
            f"eager ax.shard_map call ({sm['sm_devices']:.0f} devices)",
            f"{sm['sm_eager_checked_us']:.0f} us",
            f"ratio {sm['sm_eager_ratio']:.3f} vs jax.shard_map",
        ),
        ("jit(ax.shard_map) steady state", "", f"ratio {sm['sm_jit_ratio']:.3f} vs jit(jax.shard_map)"),
    ]
    for k, v in s.items():
        if k.endswith("_leaves_us"):
            n = k.split("_")[1]
            rows.append(
                (f"predict, {n} leaves (first sight)", f"{v / 1e3:.2f} ms", f"{s[k + '_per_leaf']:.2f} us/leaf")
            )
    rows += [
        ("import jax", f"{i['import_jax_ms']:.0f} ms", ""),
        (
            "import jax, axischeck",
            f"{i['import_jax_axischeck_ms']:.0f} ms",
            f"axischeck's own: {i['import_overhead_ms']:.0f} ms (target <= 50 ms)",
        ),
        ("Monte Carlo pi: Python loop", f"{m['loop_ms']:.0f} ms", ""),
        ("  jit(jax.vmap)", f"{m['jit_vmap_ms']:.2f} ms", ""),
        (
            "  jit(ax.vmap)",
            f"{m['jit_ax_vmap_ms']:.2f} ms",
            f"{m['speedup_vs_loop']:.0f}x the loop; ratio {m['ratio_vs_jax']:.3f} vs jax",
        ),
    ]
    if "jaxtyping" in results:
        jt = results["jaxtyping"]
        rows.append(("jaxtyping+beartype eager overhead", f"{jt['jaxtyping_overhead_us']:.1f} us", ""))
        rows.append(("ax.check eager overhead", f"{jt['axischeck_check_overhead_us']:.1f} us", ""))
    else:
        rows.append(("jaxtyping+beartype", "not installed", "pip install -e '.[bench]'"))
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    print(f"axischeck {ax.__version__} benchmarks, jax {jax.__version__}{' (quick mode)' if q else ''}")
    for a, b, c in rows:
        print(f"  {a.ljust(w0)}  {b.rjust(w1)}  {c}".rstrip())
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())

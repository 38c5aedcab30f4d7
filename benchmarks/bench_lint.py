"""`axischeck lint` throughput on a file dense with transforms (target: >= 50,000 lines/s).

    python benchmarks/bench_lint.py               # a 20,000-line file, 5 rounds
    python benchmarks/bench_lint.py --lines 5000 --rounds 3

Generates a file in a temporary folder: every block has constants, array constructors,
a partial of a transform, vmap / pmap calls with in_axes in names, a default parameter,
collectives under named and unnamed transforms and a decorated function. It then lints
it in this process (start-up and imports excluded: they are measured by
`python -X importtime -m axischeck lint`) and prints the median lines per second. The
generated code is correct, so a finding is a false positive and is printed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HEADER = """\
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

rng = np.random.default_rng(0)
KEY = jax.random.PRNGKey(0)
"""

BLOCK = """\

IN_{i} = (None, 0)
X_{i} = jnp.ones(({n}, 4))
Y_{i} = rng.normal(size=({n}, 2))
Z_{i} = jnp.arange({n4}.0).reshape({n}, 4)


def loss_{i}(w, x, y=None):
    return jnp.sum(w * x)


def norm_{i}(x):
    return x / lax.psum(x, "batch")


@partial(jax.vmap, in_axes=(0, None))
def rows_{i}(x, w):
    return x @ w


def step_{i}(x, axis=0):
    return jax.vmap(jnp.sum, in_axes=axis)(x)


run_{i} = partial(jax.vmap(loss_{i}, in_axes=IN_{i}), 2.0)
run_{i}(X_{i})
jax.vmap(loss_{i}, in_axes=(0, 0))(X_{i}, Z_{i})
jax.vmap(norm_{i}, axis_name="batch")(Y_{i})
jax.pmap(lambda x: lax.pmean(x, "d"), axis_name="d")(jnp.ones((jax.device_count(), 3)))
rows_{i}(jnp.stack([X_{i}, X_{i}]), jnp.eye(4))
step_{i}(X_{i})
"""


def generate(lines: int) -> str:
    parts = [HEADER]
    count = HEADER.count("\n")
    i = 0
    while count < lines:
        n = 2 + i % 7
        block = BLOCK.format(i=i, n=n, n4=n * 4)
        parts.append(block)
        count += block.count("\n")
        i += 1
    return "".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)

    from axischeck._lint import lint_files

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "dense.py"
        path.write_text(generate(args.lines))
        lines = path.read_text().count("\n")
        times, cpu = [], []
        for _ in range(args.rounds):
            start, start_cpu = time.perf_counter(), time.process_time()
            findings, stats = lint_files([path])
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    median, median_cpu = statistics.median(times), statistics.median(cpu)
    # CPU time as well as wall time: on a shared machine the wall clock counts other processes.
    print(
        f"axischeck lint: {lines} lines, {stats.sites} transform sites ({stats.understood} resolved),"
        f" median of {args.rounds} rounds: {median * 1e3:.0f} ms wall, {median_cpu * 1e3:.0f} ms CPU;"
        f" {lines / median:,.0f} lines/s wall, {lines / median_cpu:,.0f} lines/s CPU (target >= 50,000);"
        f" {len(findings)} findings"
    )
    for f in findings:
        print(f"  unexpected: {f.line}:{f.column} {f.code} {f.message[:120]}")
    return 0 if not findings else 1


if __name__ == "__main__":
    sys.exit(main())

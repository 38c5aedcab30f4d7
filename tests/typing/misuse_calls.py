"""Calls that break a decorated function's own signature: mypy must reject each.

Checked by tests/test_typing.py: every mypy error falls on a line marked
`# E: <code>`, and every marker gets its error. Excluded from `mypy src tests/typing`.
"""

from __future__ import annotations

from typing import Annotated

import jax
import jax.numpy as jnp

import axischeck as ax

Array = jax.Array


def complex_operation(x: Array, y: Array, z: Array) -> Array:
    return jnp.einsum("ab,bc->ac", x, y) + z


@ax.vmap
def row_norm(x: Annotated[Array, "n"]) -> Annotated[Array, ""]:
    return jnp.sqrt(jnp.sum(x * x))


@ax.vmap(in_axes=(0, None))
def project(x: Annotated[Array, "i"], w: Annotated[Array, "i o"]) -> Annotated[Array, "o"]:
    return x @ w


@ax.vmap(in_axes=(None, 0))
def dense(
    params: Annotated[dict[str, Array], {"W": "o i", "b": "o"}], x: Annotated[Array, "i"]
) -> Annotated[Array, "o"]:
    return params["W"] @ x + params["b"]


@ax.check(signature="(n,f),(f,o)->(n,o)")
def linear(X: Array, W: Array) -> Array:
    return X @ W


def scaled(x: Array, *, factor: float) -> Array:
    return x * factor


batched = ax.vmap(complex_operation, in_axes=(0, 1, 0))


class Model:
    @staticmethod
    @ax.vmap
    def pairwise(a: Annotated[Array, "d"], b: Annotated[Array, "d"]) -> Annotated[Array, ""]:
        return jnp.dot(a, b)

    def run(self, x: Array) -> Array:
        return batched(x, x)  # E: call-arg


x = jnp.ones((16, 8, 4))
einsum_v = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature="(a,b),(b,c),(a,c)->(a,c)")
nested = ax.vmap(ax.vmap(complex_operation))
scaled_v = ax.vmap(scaled)

# Wrong argument types.
einsum_v("x", x, x)  # E: arg-type
row_norm([1.0, 2.0])  # E: arg-type
project(x, None)  # E: arg-type
dense(x, x)  # E: arg-type
dense({"W": "o i"}, x)  # E: dict-item
linear(x, 3)  # E: arg-type
nested(x, x, "z")  # E: arg-type
Model.pairwise(x, "b")  # E: arg-type
scaled_v(x, factor="2")  # E: arg-type

# Wrong number or names of arguments.
einsum_v(x, x)  # E: call-arg
einsum_v(x, x, x, x)  # E: call-arg
row_norm()  # E: call-arg
project(x, x, w=x)  # E: misc
project(x, v=x)  # E: call-arg
nested(x, x)  # E: call-arg
linear(X=x, w=x)  # E: call-arg
scaled_v(x, 2.0)  # E: call-arg
Model.pairwise(x)  # E: call-arg

# Wrong use of the result: the return type is kept.
label: str = einsum_v(x, x, x)  # E: assignment
total: int = row_norm(x)  # E: assignment
items = linear(x, x).items()  # E: attr-defined

# shard_map keeps the function's parameters too.
_rows = jax.sharding.PartitionSpec("x")  # type: ignore[no-untyped-call]
sharded = ax.shard_map(complex_operation, mesh={"x": 4}, in_specs=_rows, out_specs=_rows)
sharded(x, x)  # E: call-arg
sharded(x, x, "z")  # E: arg-type
name: str = sharded(x, x, x)  # E: assignment

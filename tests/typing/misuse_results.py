"""Misuses of predictions, explanations, signatures and errors: mypy must reject each.

Checked by tests/test_typing.py (see misuse_calls.py). `Prediction.shapes` is a pytree
of `ax.Shape` shaped like the function's output, so it is `Any`: misuses of what is
inside it cannot be caught statically.
"""

from __future__ import annotations

from typing import Annotated

import jax
import jax.numpy as jnp

import axischeck as ax

Array = jax.Array


@ax.vmap(in_axes=(0, None))
def project(x: Annotated[Array, "i"], w: Annotated[Array, "i o"]) -> Annotated[Array, "o"]:
    return x @ w


x = jnp.ones((16, 4))
w = jnp.ones((4, 3))
pred = project.predict(x, w)

# Prediction: shapes, axis_size (None for `check`) and steps.
pred.shape  # E: attr-defined
pred.output_shapes  # E: attr-defined
pred.batch_size  # E: attr-defined
pred.axis_size + 1  # E: operator
rows: int = pred.axis_size  # E: assignment
project.predict(x, w).explain()  # E: attr-defined

# explain returns text.
table: list[str] = project.explain(x, w)  # E: assignment
project.explain(x, w).shapes  # E: attr-defined

# Signature is a value: read-only views, and vmap returns a Signature, not a function.
sig = ax.Signature("(a,b),(b,c)->(a,c)")
sig.core = sig.core  # E: misc
sig.vmap(in_axes=0)(x, w)  # E: operator
n: str = sig.num_inputs  # E: assignment
sig.levels.append(0)  # E: attr-defined

# Errors: the facts are typed.
try:
    project(x, w)
except ax.AxisCheckError as err:
    err.symbol.upper()  # E: union-attr
    err.places[0].size + 1  # E: operator, operator
    err.places.append(err.places[0])  # E: attr-defined
    code: int = err.problem  # E: assignment

# Shape is a tuple of ints.
shape = ax.Shape((16, 3))
label: str = shape[0]  # E: assignment
shape.rank()  # E: operator

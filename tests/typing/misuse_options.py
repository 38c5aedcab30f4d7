"""Transform options of the wrong type: mypy must reject each.

Checked by tests/test_typing.py (see misuse_calls.py); a marker may list several codes
when mypy reports several errors on one line. `in_axes` and `out_axes` are
`Any` (as in jax.vmap, they are pytrees of ints and None), so only the options with
a precise type can be caught statically; the library raises `ax.SpecError` for the rest.
"""

from __future__ import annotations

import jax

import axischeck as ax

Array = jax.Array


def f(x: Array, y: Array) -> Array:
    return x + y


ax.vmap(f, axis_size="3")  # E: call-overload
ax.vmap(f, in_axes=0, axis_size=3.0)  # E: call-overload
ax.vmap(f, axis_name=["batch"])  # E: call-overload
ax.vmap(f, spmd_axis_name=["data"])  # E: call-overload
ax.vmap(f, signature=3)  # E: call-overload
ax.vmap(f, 0, 0, None, None, None, False, "(a),(a)->(a)")  # E: call-overload
ax.vmap(f, in_axis=0)  # E: call-overload, call-overload
ax.vmap(3)  # E: call-overload
ax.vmap(in_axes=(0, None))(3)  # E: arg-type
ax.check(f, "(a),(a)->(a)")  # E: call-overload
ax.check(f, signature=None, in_axes=0)  # E: call-overload, call-overload

sig = ax.Signature("(a,b),(b,c)->(a,c)")
sig.vmap(in_axes=(0, 1), axis_size="16")  # E: arg-type
sig.vmap(0, 0, 16)  # E: call-arg
sig.vmap(0, axis_name=[0])  # E: arg-type
ax.Shape(("a", "b"))  # E: arg-type
ax.Shape(16)  # E: arg-type

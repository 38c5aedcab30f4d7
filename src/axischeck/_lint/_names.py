"""What a dotted name means: the JAX and axischeck functions the linter knows by name.

`qualname(expr)` turns `jax.vmap`, `ax.vmap` (after `import axischeck as ax`), `vm`
(after `from jax import vmap as vm`) or `lax.psum` into the dotted name it was imported
as; the tables below say what those names are.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ._module import ASSIGN, IMPORT, ModuleInfo, Scope


@dataclass(frozen=True, slots=True)
class TransformKind:
    """A mapping transform and how its call spells its options."""

    kind: str  # "vmap", "pmap", "shard_map", "smap"
    lib: str  # "jax", "axischeck", or a library built on JAX's transforms: "equinox", "flax"
    positional: tuple[str, ...]  # option names that may be passed by position after the function
    factory: bool  # usable as `T(options...)(f)` / `@T(options...)`
    spelled: str = ""  # how messages name it when not by its kind (`filter_vmap`, `nnx.vmap`)

    @property
    def native(self) -> bool:
        """JAX's or axischeck's own transform, whose rules every check mirrors; the others
        (Equinox's filter_vmap, Flax NNX's vmap) get the checks their semantics share."""
        return self.lib in ("jax", "axischeck")

    @property
    def title(self) -> str:
        return f"{'ax' if self.lib == 'axischeck' else 'jax'}.{self.kind}"


_VMAP_POS = ("in_axes", "out_axes", "axis_name", "axis_size", "spmd_axis_name", "sum_match")

TRANSFORMS: dict[str, TransformKind] = {
    "jax.vmap": TransformKind("vmap", "jax", _VMAP_POS, False),
    "jax._src.api.vmap": TransformKind("vmap", "jax", _VMAP_POS, False),
    "axischeck.vmap": TransformKind("vmap", "axischeck", _VMAP_POS, True),
    "jax.pmap": TransformKind("pmap", "jax", ("axis_name",), False),
    "jax._src.api.pmap": TransformKind("pmap", "jax", ("axis_name",), False),
    "axischeck.pmap": TransformKind("pmap", "axischeck", ("axis_name",), True),
    "jax.shard_map": TransformKind("shard_map", "jax", (), True),
    "jax._src.shard_map.shard_map": TransformKind("shard_map", "jax", (), True),
    "jax.experimental.shard_map.shard_map": TransformKind(
        "shard_map", "jax", ("mesh", "in_specs", "out_specs", "check_rep"), False
    ),
    "axischeck.shard_map": TransformKind("shard_map", "axischeck", (), True),
    "jax.smap": TransformKind("smap", "jax", (), True),
    "jax._src.shard_map.smap": TransformKind("smap", "jax", (), True),
    "axischeck.smap": TransformKind("smap", "axischeck", (), True),
    # Equinox: in_axes / out_axes default to `if_array(0)` (non-arrays unmapped), a dict in_axes
    # names parameters, and a call may not pass keyword arguments.
    "equinox.filter_vmap": TransformKind("vmap", "equinox", (), True, "filter_vmap"),
    "equinox.filter_pmap": TransformKind("pmap", "equinox", (), True, "filter_pmap"),
    # Flax NNX: jax.vmap's options (keyword-only), with StateAxes leaves for graph nodes.
    "flax.nnx.vmap": TransformKind("vmap", "flax", (), True, "nnx.vmap"),
    "flax.nnx.pmap": TransformKind("pmap", "flax", (), True, "nnx.pmap"),
}

_VMAP_OPTIONS = frozenset({"fun", "f", *_VMAP_POS})
_PMAP_OPTIONS = frozenset(
    {"fun", "f", "axis_name", "in_axes", "out_axes", "static_broadcasted_argnums", "devices", "backend"}
    | {"axis_size", "donate_argnums"}
)
_SHARD_MAP_OPTIONS = frozenset({"f", "mesh", "in_specs", "out_specs", "axis_names", "check_vma"})
_SMAP_OPTIONS = frozenset({"f", "in_axes", "out_axes", "axis_name"})

OPTION_NAMES: dict[tuple[str, bool, bool, tuple[str, ...]], frozenset[str]] = {
    # (kind, JAX's or axischeck's, axischeck's, positional options) -> the keywords it takes
    ("vmap", True, False, _VMAP_POS): _VMAP_OPTIONS,
    ("vmap", True, True, _VMAP_POS): _VMAP_OPTIONS | {"signature"},
    ("pmap", True, False, ("axis_name",)): _PMAP_OPTIONS,
    ("pmap", True, True, ("axis_name",)): _PMAP_OPTIONS | {"signature"},
    ("shard_map", True, False, ()): _SHARD_MAP_OPTIONS,
    ("shard_map", True, True, ()): _SHARD_MAP_OPTIONS | {"signature"},
    ("smap", True, False, ()): _SMAP_OPTIONS,
    ("smap", True, True, ()): _SMAP_OPTIONS | {"signature"},
}
"""The options each of JAX's and axischeck's transforms takes by keyword (lint's AX023
reads any other keyword as a misspelled one): JAX 0.10 to 0.12 alike."""


PARTIAL = frozenset({"functools.partial"})

# Wrappers that keep the wrapped function's parameters and bind no axis name. A use of
# f inside them (`jax.jit(f)`) passes f's calls through unchanged.
TRANSPARENT = frozenset(
    {
        "jax.jit",
        "jax.checkpoint",
        "jax.remat",
        "jax.ad_checkpoint.checkpoint",
        "jax.custom_jvp",
        "jax.custom_vjp",
        "jax.named_call",
        "axischeck.check",
        "jax._src.api.jit",
    }
)

# Wrappers that return a new function with other parameters (or outputs): f's body still
# runs wherever the result is called, but its signature is not the result's.
WRAPPERS = frozenset(
    {
        "jax.grad",
        "jax.value_and_grad",
        "jax.jacfwd",
        "jax.jacrev",
        "jax.hessian",
    }
)

# Functions that call their function arguments right away, where they are called:
# argument positions that hold functions (a list of them, for lax.switch's branches).
IMMEDIATE: dict[str, tuple[int, ...]] = {
    "jax.lax.scan": (0,),
    "jax.lax.fori_loop": (2,),
    "jax.lax.while_loop": (0, 1),
    "jax.lax.cond": (1, 2),
    "jax.lax.switch": (1,),
    "jax.lax.map": (0,),
    "jax.lax.associative_scan": (0,),
    "jax.eval_shape": (0,),
    "jax.jvp": (0,),
    "jax.vjp": (0,),
    "jax.linearize": (0,),
    "jax.tree_util.tree_map": (0,),
    "jax.tree.map": (0,),
}

# Collectives, with the position of their axis_name argument.
COLLECTIVES: dict[str, int] = {
    "jax.lax.psum": 1,
    "jax.lax.pmean": 1,
    "jax.lax.pmax": 1,
    "jax.lax.pmin": 1,
    "jax.lax.all_gather": 1,
    "jax.lax.psum_scatter": 1,
    "jax.lax.all_to_all": 1,
    "jax.lax.ppermute": 1,
    "jax.lax.axis_index": 0,
}

PARTITION_SPEC = frozenset(
    {"jax.sharding.PartitionSpec", "jax.P", "jax.sharding.P", "jax.experimental.PartitionSpec", "axischeck.P"}
)

STATICMETHOD = frozenset({"staticmethod"})
CLASSMETHOD = frozenset({"classmethod"})


def qualname(expr: ast.expr, module: ModuleInfo, scope: Scope, depth: int = 0) -> str | None:
    """The dotted name `expr` was imported as (`jax.lax.psum`), or None when not sure."""
    if isinstance(expr, ast.Attribute):
        base = qualname(expr.value, module, scope, depth)
        return None if base is None else f"{base}.{expr.attr}"
    if not isinstance(expr, ast.Name):
        return None
    if depth:
        return _name(expr.id, module, scope, depth)
    cache = scope.qualnames  # a name read in a scope always means the same: bindings are fixed
    if expr.id not in cache:
        cache[expr.id] = _name(expr.id, module, scope, 0)
    return cache[expr.id]


def _name(name: str, module: ModuleInfo, scope: Scope, depth: int) -> str | None:
    if name in ("staticmethod", "classmethod"):
        return name if module.lookup(name, scope) is None else None
    bindings = module.lookup(name, scope)
    if not bindings:
        return None
    if all(b.kind == IMPORT for b in bindings):
        names = {_canonical(str(b.value)) for b in bindings}
        # `try: from jax import shard_map / except ImportError: from jax.experimental...`
        return names.pop() if len(names) == 1 else None
    if len(bindings) == 1 and bindings[0].kind == ASSIGN and depth < 8:
        value = bindings[0].value
        owner = bindings[0].scope
        if isinstance(value, (ast.Name, ast.Attribute)) and owner is not None:
            return qualname(value, module, owner, depth + 1)  # `vmap = jax.vmap`
    return None


def _canonical(name: str) -> str:
    """Spellings of one function: jax.experimental's shard_map is told apart (other signature)."""
    if name in TRANSFORMS:
        t = TRANSFORMS[name]
        if not t.native or name == "jax.experimental.shard_map.shard_map":
            return name
        return f"{t.lib}.{t.kind}"
    return name

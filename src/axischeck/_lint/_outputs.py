"""Outputs that vary along the mapped axis, against an out_axes of None (AX018), or along
a mesh axis of size 1 that out_specs leaves out (AX025).

`out_axes=None` says an output is the same for every example (or device). When the mapped
function returns something computed from a mapped argument, it is not: vmap raises ("at
vmap out_axes[1], got axis spec None but output was batched on axis 0"), smap raises, and
pmap silently returns device 0's value.

An expression *varies* when it is certain to carry the mapped axis on every run:
arithmetic on a mapped parameter (`x * 2.0`, `-x`, `x @ w`), an array method or a `jnp`,
`jax.nn` or `jax.random` function of such a value, or a local name assigned once from
one. A bare parameter is not enough (it may be an empty pytree), and any other call, a
collective included (`lax.psum` gives the same value everywhere), is unknown.

A mesh axis of size 1 splits nothing, but shard_map's replication check reads types, not
sizes: a value computed from an argument whose in_specs names the axis varies along it,
and an out_specs that leaves the axis out promises it does not (JAX raises "out_specs
which require replication which can't be statically inferred").
"""

from __future__ import annotations

import ast
from typing import Any

from ._callee import Site, is_default
from ._checks import SiteChecker
from ._literals import UNKNOWN, axes_text
from ._module import ASSIGN, DEF, FunctionInfo, ModuleInfo, unique
from ._names import TRANSFORMS, qualname
from ._shapes import Array, Mesh, Spec
from ._values import Values

# Functions of an array that keep the mapped axis of their first argument (under vmap a
# batched operand gives a batched result; none of them can drop a dimension it does not see).
_NUMPY = frozenset(
    {
        "abs", "exp", "log", "log1p", "expm1", "sqrt", "square", "sin", "cos", "tan", "tanh", "sinh", "cosh",
        "arctan", "sign", "floor", "ceil", "round", "sum", "mean", "max", "min", "prod", "std", "var",
        "dot", "matmul", "vdot", "inner", "outer", "maximum", "minimum", "clip", "reshape", "transpose",
        "ravel", "cumsum", "asarray", "array", "negative", "reciprocal", "power", "multiply", "add", "subtract",
        "divide",
    }
)  # fmt: skip
_NN = frozenset({"relu", "sigmoid", "softmax", "log_softmax", "gelu", "silu", "softplus", "tanh", "one_hot"})
_RANDOM = frozenset({"normal", "uniform", "bernoulli", "categorical", "split", "fold_in", "randint", "gumbel"})
_METHODS = frozenset({"sum", "mean", "max", "min", "prod", "reshape", "transpose", "astype", "ravel", "squeeze"})
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)


def check_outputs(checker: SiteChecker) -> None:
    """AX018 at a vmap / pmap / smap whose out_axes is None where the output varies."""
    site = checker.site
    kind = site.transform.kind
    if kind not in ("vmap", "pmap", "smap") or not site.readable or checker.codes or not site.transform.native:
        return
    out_axes = site.option("out_axes")
    if is_default(out_axes) or out_axes is UNKNOWN:
        return
    fn = mapped_def(site)
    if fn is None or fn.returns is None:
        return
    mapped = _mapped_params(checker, fn)
    if not mapped:
        return
    reading = _Varies(fn, mapped)
    for index in _unmapped_outputs(out_axes, fn.returns):
        exprs = [r.elts[index] if isinstance(r, ast.Tuple) and index is not None else r for r in fn.returns]
        cause = [reading.why(e) for e in exprs]
        if not exprs or any(c is None for c in cause):
            continue
        what = "the output" if index is None else f"output {index}"
        shown = ast.unparse(exprs[0])
        checker.emit(
            site.options["out_axes"],
            "AX018",
            f"out_axes gives {what} None (the same for every {_unit(kind)}), but {fn.qualname} returns {shown}"
            f" (line {exprs[0].lineno}), which varies along the mapped axis ({cause[0]} is mapped);"
            f" {_jax_says(kind, index)}",
            _fix(out_axes, index),
        )
        return


def check_size_one_axes(checker: SiteChecker, values: Values) -> None:
    """AX025 at a shard_map whose mesh (written in the file) has an axis of size 1 that
    in_specs names for an argument the output is computed from, and out_specs leaves out."""
    site = checker.site
    if site.transform.kind != "shard_map" or not site.transform.native or not site.readable or checker.codes:
        return
    if any(site.has(check) and site.option(check) is not True for check in ("check_vma", "check_rep")):
        return  # the replication check off (or not known to be on)
    mesh = values.of(site.options.get("mesh"), site.module) if "mesh" in site.options else UNKNOWN
    single = [name for name, size in mesh.sizes if size == 1] if isinstance(mesh, Mesh) else []
    fn = mapped_def(site)
    if not single or fn is None or fn.returns is None or fn.cls is not None or len(fn.returns) != 1:
        return
    in_specs = values.of(site.options.get("in_specs"), site.module)
    out_spec = values.of(site.options.get("out_specs"), site.module)
    params = fn.params.positional[: fn.params.required]
    specs = in_specs if isinstance(in_specs, tuple) else (in_specs,) * len(params)
    if not isinstance(out_spec, Spec) or len(specs) != len(params):
        return
    for axis in single:
        if any(axis in entry for entry in out_spec.entries):
            continue
        named = {
            p: spec for p, spec in zip(params, specs, strict=True) if isinstance(spec, Spec) and _names(spec, axis)
        }
        source = _Varies(fn, frozenset(named)).why(fn.returns[0]) if named else None
        if source is None:
            continue
        kept = Spec(tuple(tuple(a for a in entry if a != axis) for entry in named[source].entries))
        checker.emit(
            site.options["out_specs"],
            "AX025",
            f"mesh axis {axis!r} has size 1, and in_specs splits {source} over it ({named[source].text()}), so"
            f" {fn.qualname}'s output, {ast.unparse(fn.returns[0])} (line {fn.returns[0].lineno}), is typed as"
            f" varying along {axis!r}; out_specs {out_spec.text()} leaves {axis!r} out, which promises the same"
            f" value on every device along it, and shard_map checks that from the types, not the size: JAX raises"
            " ValueError 'shard_map applied to the function ... was given out_specs which require replication'",
            f"{kept.text()} for {source} in in_specs (a mesh axis of size 1 splits nothing: the blocks stay the same)",
        )
        return


def check_copies_stacked(checker: SiteChecker, values: Values) -> None:
    """AX028 at a shard_map or smap that splits no argument and splits its output: every
    device computes the same block from the same whole arguments, and JAX stacks the
    copies without a word (smap's bare `in_axes=None`, meant for the weights, replicates
    the batch too). Only where the mapped def's output is computed from a parameter (a
    buffer made from nothing is made per device on purpose) and the def calls nothing
    but JAX's own functions and reads no `axis_index` (its blocks could differ then)."""
    site = checker.site
    kind = site.transform.kind
    if kind not in ("shard_map", "smap") or not site.transform.native or not site.readable or checker.codes:
        return
    fn = mapped_def(site)
    if fn is None or fn.returns is None or fn.cls is not None or len(fn.returns) != 1 or not _jax_calls_only(fn):
        return
    source = _Varies(fn, frozenset(fn.params.positional[: fn.params.required])).why(fn.returns[0])
    if source is None:
        return
    split = _split_output(site, values) if kind == "shard_map" else _stacked_output(site)
    if split is None:
        return
    option, written, stacked = split
    whole = "None in in_axes applies to every argument" if kind == "smap" else "P() passes it whole"
    checker.emit(
        site.options[option],
        "AX028",
        f"{option}={written} splits no argument, so every device computes the same {fn.qualname} output,"
        f" {ast.unparse(fn.returns[0])} (line {fn.returns[0].lineno}, from {source}), and {stacked} stacks"
        f" the identical copies into one array; JAX runs it without an error. Give the argument meant per device"
        f" an entry that splits it ({whole})",
    )


def _split_output(site: Site, values: Values) -> tuple[str, str, str] | None:
    """A shard_map's in_specs that split no argument (each `P()`, or one for all) and
    out_specs that split the output, as (option, in_specs as written, out_specs said)."""
    in_specs = values.of(site.options.get("in_specs"), site.module)
    out_spec = values.of(site.options.get("out_specs"), site.module)
    specs = in_specs if isinstance(in_specs, tuple) else (in_specs,)
    if not specs or not all(isinstance(s, Spec) and not any(s.entries) for s in specs):
        return None
    if not isinstance(out_spec, Spec) or not any(out_spec.entries):
        return None
    written = f"({', '.join(s.text() for s in specs)})" if isinstance(in_specs, tuple) else specs[0].text()
    return "in_specs", written, f"out_specs {out_spec.text()}"


def _stacked_output(site: Site) -> tuple[str, str, str] | None:
    """An smap's in_axes of None for every argument (a bare None, or a tuple of Nones) and
    an int out_axes, as (option, in_axes as written, out_axes said)."""
    in_axes, out_axes = site.option("in_axes"), site.option("out_axes")
    if "in_axes" not in site.options or type(out_axes) is not int:
        return None
    if not (in_axes is None or (isinstance(in_axes, tuple) and in_axes and all(a is None for a in in_axes))):
        return None
    return "in_axes", axes_text(in_axes), f"out_axes={out_axes}"


# JAX's functions whose result differs from device to device on the same input: the
# device's index, and the collectives that hand each device its own part or a neighbour's.
_BLOCKS_DIFFER = frozenset({"axis_index", "psum_scatter", "reduce_scatter", "all_to_all", "ppermute", "pshuffle"})
_CASTS_TO_VARYING = frozenset({"pcast", "pvary"})


def _jax_calls_only(fn: FunctionInfo) -> bool:
    """Whether every call in a def is to JAX's own functions (jax.*) or an array method,
    and none makes a device's block its own (`_BLOCKS_DIFFER`; a cast to varying says the
    author means the blocks to differ)."""
    for node in ast.walk(fn.node):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _METHODS:
            continue
        name = qualname(func, fn.module, fn.module.scope_of.get(node) or fn.scope)
        if name is None or not name.startswith("jax."):
            return False
        if name.rpartition(".")[2] in _BLOCKS_DIFFER | _CASTS_TO_VARYING:
            return False
    return True


def _names(spec: Spec, axis: str) -> bool:
    return any(axis in entry for entry in spec.entries)


def _unit(kind: str) -> str:
    return "device" if kind == "pmap" else "shard" if kind == "smap" else "example"


def _jax_says(kind: str, index: int | None) -> str:
    if kind == "vmap":
        where = "" if index is None else f"[{index}]"
        return f"JAX raises ValueError 'at vmap out_axes{where}, got axis spec None but output was batched on axis 0'"
    if kind == "smap":
        return "JAX raises ValueError 'shard_map applied to the function ... out_specs ... replication'"
    return "pmap does not check it and returns device 0's value only, dropping the others"


def _fix(out_axes: Any, index: int | None) -> str | None:
    if index is None:
        return "out_axes=0"
    if isinstance(out_axes, tuple):
        return f"out_axes={axes_text(tuple(0 if i == index else a for i, a in enumerate(out_axes)))}"
    return None


def _unmapped_outputs(out_axes: Any, returns: tuple[ast.expr, ...]) -> list[int | None]:
    """The outputs out_axes leaves unmapped: None for the whole output, or each index of a
    None in a tuple out_axes that matches every returned tuple literal."""
    if out_axes is None:
        return [None]
    if not isinstance(out_axes, tuple):
        return []
    if not all(isinstance(r, ast.Tuple) and len(r.elts) == len(out_axes) for r in returns):
        return []
    if any(isinstance(e, ast.Starred) for r in returns if isinstance(r, ast.Tuple) for e in r.elts):
        return []
    return [i for i, a in enumerate(out_axes) if a is None]


def mapped_def(site: Site) -> FunctionInfo | None:
    """The def or lambda the site maps directly (no partial, wrapper or other decorator)."""
    module = site.module
    if site.decorated is not None:
        fn = site.decorated
        return fn if site.decorator_index == len(fn.decorators) - 1 else None
    fun = site.fun
    if isinstance(fun, ast.Lambda):
        return module.function_of.get(fun)
    if isinstance(fun, ast.Name):
        b = unique(module.lookup(fun.id, site.scope), DEF)
        if b is not None and isinstance(b.value, FunctionInfo) and not b.value.decorators:
            return b.value
    return None


def _mapped_params(checker: SiteChecker, fn: FunctionInfo) -> frozenset[str]:
    """Required positional parameters that in_axes maps (every call passes them)."""
    p = fn.params
    if fn.cls is not None:
        return frozenset()  # a method: self shifts the positions
    in_axes = checker.in_axes()
    static = checker.static_argnums() if checker.site.has("static_broadcasted_argnums") else ()
    if static is None:
        return frozenset()
    names = []
    for i, name in enumerate(p.positional[: p.required]):
        axis = in_axes[i] if isinstance(in_axes, (tuple, list)) and i < len(in_axes) else in_axes
        if isinstance(in_axes, (tuple, list)) and i >= len(in_axes):
            break
        if type(axis) is int and i not in static:
            names.append(name)
    return frozenset(names)


class _Varies:
    """Reads whether an expression of `fn` varies along the mapped axis, and why."""

    def __init__(self, fn: FunctionInfo, mapped: frozenset[str]) -> None:
        self.fn = fn
        self.module: ModuleInfo = fn.module
        self.mapped = mapped
        self.depth = 0

    def why(self, expr: ast.expr) -> str | None:
        """The mapped parameter the value comes from, or None when not certain."""
        return self._read(expr, strict=True)

    def _read(self, expr: ast.expr, strict: bool) -> str | None:
        if self.depth > 16:
            return None
        self.depth += 1
        try:
            return self._step(expr, strict)
        finally:
            self.depth -= 1

    def _step(self, expr: ast.expr, strict: bool) -> str | None:
        if isinstance(expr, ast.Name):
            return self._name(expr, strict)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, _OPERATORS):
            return self._read(expr.left, False) or self._read(expr.right, False)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd, ast.Invert)):
            return self._read(expr.operand, False)
        if isinstance(expr, ast.Attribute) and expr.attr in ("T", "mT"):
            return self._read(expr.value, False)
        if isinstance(expr, ast.Call):
            return self._call(expr)
        return None

    def _name(self, expr: ast.Name, strict: bool) -> str | None:
        scope = self.fn.scope
        if expr.id in self.mapped and self.module.owner(expr.id, scope) is scope:
            bindings = scope.bindings[expr.id]
            # A parameter never assigned again; bare, it may be an empty pytree.
            return None if strict or len(bindings) != 1 else expr.id
        b = unique(scope.bindings.get(expr.id), ASSIGN)
        if b is None or not isinstance(b.value, ast.expr):
            return None
        return self._read(b.value, strict)

    def _call(self, expr: ast.Call) -> str | None:
        func = expr.func
        if isinstance(func, ast.Attribute) and func.attr in _METHODS:
            base = self._read(func.value, False)
            if base is not None:
                return base
        if not expr.args or isinstance(expr.args[0], ast.Starred):
            return None
        name = qualname(func, self.module, self.module.scope_of.get(expr) or self.fn.scope)
        if name is None:
            return None
        lib, _, last = name.rpartition(".")
        known = (
            (lib == "jax.numpy" and last in _NUMPY)
            or (lib == "jax.nn" and last in _NN)
            or (lib == "jax.random" and last in _RANDOM)
        )
        if not known:
            return None
        # Any array argument carries its variation into the result (`jnp.maximum(a, x)`);
        # the other arguments (axes, shapes, keys' shapes) are static and never vary.
        return next((why for a in expr.args if (why := self._read(a, False)) is not None), None)


# ------------------------------------------------------------------ scan carries (AX021)

# Array builders whose result is the same on every device when their arguments are constants.
_CONSTANT_BUILDERS = frozenset({"jax.numpy.zeros", "jax.numpy.ones", "jax.numpy.full", "jax.numpy.empty"})


def check_scan_carries(checker: SiteChecker, values: Values) -> None:
    """AX021: inside `jax.shard_map` (check_vma on, as by default), a `lax.scan` whose carry
    starts as an array built from constants (`jnp.zeros(3)`: the same on every device) and
    comes back varying along a mesh axis (`acc + row` with rows of a sharded argument).
    JAX raises TypeError 'scan body function carry input and carry output must have equal
    types'; `jax.lax.pcast(init, axis, to="varying")` is the fix folx applied."""
    site = checker.site
    t = site.transform
    if t is not TRANSFORMS["jax.shard_map"] or not site.readable:
        return  # jax.shard_map, whose check_vma is on by default
    if "check_vma" in site.options or "check_rep" in site.options:
        return  # set by hand: not read
    fn = mapped_def(site)
    if fn is None or fn.cls is not None or "in_specs" not in site.options:
        return
    varying = _sharded_params(fn, values.of(site.options["in_specs"], site.module))
    if not varying:
        return
    module = fn.module
    outer = _Varies(fn, varying)
    for call in module.calls_of(frozenset({"scan"})):
        if module.scope_of.get(call) is not fn.scope or len(call.args) < 3 or call.keywords:
            continue
        if qualname(call.func, module, fn.scope) != "jax.lax.scan":
            continue
        step_node, init, xs = call.args[:3]
        if not _built_from_constants(init, module, fn, values) or outer.why(xs) is None and not _bare(xs, varying):
            continue
        step = _local_def(step_node, module, fn)
        if step is None or step.returns is None or len(step.params.positional) != 2 or step.params.required != 2:
            continue
        carry_out = [r.elts[0] for r in step.returns if isinstance(r, ast.Tuple) and len(r.elts) == 2]
        if len(carry_out) != len(step.returns):
            continue
        inner = _Varies(step, frozenset(step.params.positional[1:]))
        if any(inner.why(c) is None for c in carry_out):
            continue
        checker.report_at(
            module,
            call,
            "AX021",
            f"lax.scan starts its carry from {ast.unparse(init)}, which is the same on every device, but"
            f" {step.qualname} returns the carry {ast.unparse(carry_out[0])} (line {carry_out[0].lineno}), which"
            f" varies along the mesh axes {ast.unparse(xs)} is split over; shard_map checks that a carry keeps its"
            " type, and JAX raises TypeError 'scan body function carry input and carry output must have equal"
            " types'",
            "start the carry from jax.lax.pcast(init, axis_name, to='varying')",
        )


def _sharded_params(fn: FunctionInfo, specs: Any) -> frozenset[str]:
    """Required positional parameters whose PartitionSpec splits a dimension over a mesh axis
    (each device gets a different block: the value varies along that axis)."""
    p = fn.params
    if p.varargs is not None:
        return frozenset()
    names = p.positional[: p.required]
    if isinstance(specs, Spec):
        specs = (specs,) * len(names)
    if not isinstance(specs, tuple) or len(specs) != len(p.positional):
        return frozenset()
    return frozenset(n for n, s in zip(names, specs, strict=False) if isinstance(s, Spec) and any(s.entries))


def _bare(expr: ast.expr, varying: frozenset[str]) -> bool:
    return isinstance(expr, ast.Name) and expr.id in varying


def _built_from_constants(expr: ast.expr, module: ModuleInfo, fn: FunctionInfo, values: Values) -> bool:
    """`jnp.zeros(3)`, `jnp.full((2, 3), 0.5)`: an array every device builds alike."""
    if not isinstance(expr, ast.Call) or expr.keywords and any(k.arg != "dtype" for k in expr.keywords):
        return False
    if qualname(expr.func, module, fn.scope) not in _CONSTANT_BUILDERS:
        return False
    return all(_constant(values.of(a, module)) for a in expr.args) and isinstance(values.of(expr, module), Array)


def _constant(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_constant(v) for v in value)
    return type(value) in (int, float, bool)


def _local_def(expr: ast.expr, module: ModuleInfo, fn: FunctionInfo) -> FunctionInfo | None:
    if not isinstance(expr, ast.Name):
        return None
    b = unique(module.lookup(expr.id, fn.scope), DEF)
    if b is None or not isinstance(b.value, FunctionInfo) or b.value.decorators:
        return None
    return b.value

"""Outputs that vary along the mapped axis, against an out_axes of None (AX018).

`out_axes=None` says an output is the same for every example (or device). When the mapped
function returns something computed from a mapped argument, it is not: vmap raises ("at
vmap out_axes[1], got axis spec None but output was batched on axis 0"), smap raises, and
pmap silently returns device 0's value.

An expression *varies* when it is certain to carry the mapped axis on every run:
arithmetic on a mapped parameter (`x * 2.0`, `-x`, `x @ w`), an array method or a `jnp`,
`jax.nn` or `jax.random` function of such a value, or a local name assigned once from
one. A bare parameter is not enough (it may be an empty pytree), and any other call, a
collective included (`lax.psum` gives the same value everywhere), is unknown.
"""

from __future__ import annotations

import ast
from typing import Any

from ._callee import Site, is_default
from ._checks import SiteChecker
from ._literals import UNKNOWN, axes_text
from ._module import ASSIGN, DEF, FunctionInfo, ModuleInfo, unique
from ._names import qualname

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
    fn = _mapped_def(site)
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


def _mapped_def(site: Site) -> FunctionInfo | None:
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
        return self._read(expr.args[0], False) if known else None

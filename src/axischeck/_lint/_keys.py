"""A random key the mapped function draws from that is the same for every example (AX022).

The runtime check (`ax.SharedRandomnessWarning`) reads JAX's trace; this is the same rule
where the file shows it, with the same words and remedy: inside a function that a vmap,
pmap, smap or shard_map maps, a `jax.random` sampler draws from a key that the map does
not map (a parameter whose in_axes entry is None, or whose in_specs entry is `P()`), that
the function closes over, or that it makes from a constant seed, so every example (or
device) draws the same numbers. A key split with `jax.random.split` stays the same along
the axis; one folded with `jax.lax.axis_index(...)` or with a mapped value varies, and is
not reported. For Flax NNX, an `nnx.vmap` whose in_axes broadcasts a module
(`None`, or `nnx.StateAxes({...: None})` without an `nnx.RngState` entry) that the
function calls, in a file whose modules build an `nnx.Dropout`, is reported with NNX's
remedy (`nnx.split_rngs` and `StateAxes({nnx.RngState: 0, ...: None})`).

Only what is certain is reported: a key read through anything but names bound once,
subscripts, `split` and `fold_in` is unknown, and so is a function that is not a `def` or
`lambda` the transform maps directly. A function with an output declared unmapped
(`out_axes=None`, or a None among its entries) may share its draws on purpose: a
parameter drawn once for the batch and returned, as the run-time check reads it.
"""

from __future__ import annotations

import ast
from typing import Any

from ._checks import SiteChecker
from ._literals import UNKNOWN
from ._module import ASSIGN, OTHER, FunctionInfo, ModuleInfo, Scope, unique
from ._names import qualname
from ._outputs import mapped_def
from ._shapes import Spec
from ._values import Values

# jax.random's samplers: each draws from its key (`key` is the first parameter of every one).
_SAMPLERS = frozenset(
    {
        "normal", "uniform", "bernoulli", "categorical", "randint", "gumbel", "truncated_normal", "permutation",
        "choice", "exponential", "laplace", "logistic", "multivariate_normal", "beta", "gamma", "dirichlet",
        "poisson", "rademacher", "ball", "orthogonal", "bits", "cauchy", "t", "chisquare", "weibull_min",
        "loggamma", "binomial", "geometric", "pareto", "maxwell", "generalized_normal", "rayleigh", "wald",
        "triangular", "lognormal", "f", "multinomial", "double_sided_maxwell",
    }
)  # fmt: skip
_SEEDED = frozenset({"jax.random.key", "jax.random.PRNGKey"})
_RUNS = "JAX runs it without a word (at run time, axischeck warns: ax.SharedRandomnessWarning)"


def check_shared_keys(checker: SiteChecker, values: Values) -> None:
    """AX022 at a map whose function draws from a key that is the same along the map."""
    site = checker.site
    kind = site.transform.kind
    if not site.readable or "AX022" in checker.codes:
        return
    if site.transform.lib == "flax":
        _check_nnx_broadcast(checker)
        return
    if kind not in ("vmap", "pmap", "smap", "shard_map") or not site.transform.native:
        return
    out_axes = site.option("out_axes")
    if out_axes is None or (isinstance(out_axes, tuple) and None in out_axes):
        return  # an output declared unmapped: the draws may be one for the batch on purpose (a parameter)
    fn = mapped_def(site)
    if fn is None or fn.cls is not None or fn.params.varargs is not None:
        return
    entries = _entries(checker, fn, values)
    if entries is None or not any(e is True for e in entries.values()):
        return  # nothing certainly mapped: the outputs need not vary
    reading = _KeyReading(fn, {name for name, mapped in entries.items() if mapped is False}, entries)
    named = _axis_names(checker, fn, values)
    module = fn.module
    for call in module.calls_of(_SAMPLERS):
        if not _inside(module.scope_of.get(call), fn.scope):
            continue
        name = qualname(call.func, module, module.scope_of[call])
        if name is None or not name.startswith("jax.random.") or name.rpartition(".")[2] not in _SAMPLERS:
            continue
        key = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "key"), None)
        origin = None if key is None or isinstance(key, ast.Starred) else reading.origin(key)
        if origin is None:
            continue
        unit = "device" if kind != "vmap" else "example"
        axes = "the mapped axis" if not named else " and ".join(f"axis {a!r}" for a in named)
        if kind == "shard_map":
            axes = "the mesh axes its outputs are split over" if not named else axes.replace("axis", "mesh axis")
        checker.report_at(
            module,
            call,
            "AX022",
            f"every {unit} draws the same random numbers: {name} at line {call.lineno} ({fn.qualname}) draws"
            f" from {_described(origin, site.transform.kind, fn)}, which is the same along {axes};"
            f" {_RUNS}",
            _remedy(origin, kind, fn, unit, named),
        )


def _inside(scope: Scope | None, fn_scope: Scope) -> bool:
    """Whether `scope` is the function's body or a scope nested in it (a scan's body)."""
    while scope is not None:
        if scope is fn_scope:
            return True
        scope = scope.parent
    return False


def _entries(checker: SiteChecker, fn: FunctionInfo, values: Values) -> dict[str, bool | None] | None:
    """Each positional parameter: True when the map certainly maps it, False when it
    certainly does not (in_axes None, in_specs `P()` or None), None when not known."""
    params = fn.params.positional
    site = checker.site
    if site.transform.kind == "shard_map":
        specs = values.of(site.options["in_specs"], site.module) if "in_specs" in site.options else UNKNOWN
        if isinstance(specs, Spec):
            specs = (specs,) * len(params)
        if not isinstance(specs, tuple) or len(specs) != len(params):
            return None
        return {
            p: (None if not isinstance(s, Spec) and s is not None else bool(s is not None and any(s.entries)))
            for p, s in zip(params, specs, strict=True)
        }
    in_axes = checker.in_axes()
    if in_axes is UNKNOWN:
        return None
    static = checker.static_argnums() if site.has("static_broadcasted_argnums") else ()
    if static is None:
        return None
    found: dict[str, bool | None] = {}
    for i, name in enumerate(params):
        if isinstance(in_axes, (tuple, list)):
            if i >= len(in_axes):
                if i < fn.params.required:
                    return None  # a required parameter without an entry: AX001's to report
                break  # a parameter left at its default: not passed, not mapped
            axis = in_axes[i]
        else:
            axis = in_axes
        found[name] = False if axis is None or i in static else True if type(axis) is int else None
    return found


def _axis_names(checker: SiteChecker, fn: FunctionInfo, values: Values) -> tuple[str, ...]:
    """The names `jax.lax.axis_index` may fold in: a vmap's, pmap's or smap's axis_name, the
    mesh axes a shard_map's in_specs split its mapped arguments over."""
    site = checker.site
    if site.transform.kind != "shard_map":
        name = site.option("axis_name")
        return (name,) if isinstance(name, str) else ()
    specs = values.of(site.options["in_specs"], site.module) if "in_specs" in site.options else UNKNOWN
    specs = specs if isinstance(specs, tuple) else (specs,)
    return tuple(sorted({a for s in specs if isinstance(s, Spec) for entry in s.entries for a in entry}))


class _KeyReading:
    """Where a key expression of `fn` comes from, when that is certain and the key is the
    same along the map: ("param", name) an unmapped parameter, ("closure", name) a value
    `fn` closes over, ("seed", text) a key made inside from a constant seed."""

    def __init__(self, fn: FunctionInfo, unmapped: set[str], entries: dict[str, bool | None]) -> None:
        self.fn = fn
        self.module: ModuleInfo = fn.module
        self.unmapped = unmapped
        self.entries = entries
        self.depth = 0

    def origin(self, expr: ast.expr) -> tuple[str, str] | None:
        if self.depth > 16:
            return None
        self.depth += 1
        try:
            return self._step(expr)
        finally:
            self.depth -= 1

    def _step(self, expr: ast.expr) -> tuple[str, str] | None:
        if isinstance(expr, ast.Name):
            return self._name(expr)
        if isinstance(expr, ast.Subscript):  # keys[0] of a split
            return self.origin(expr.value)
        if not isinstance(expr, ast.Call) or not expr.args or expr.keywords:
            return None
        scope = self.module.scope_of.get(expr) or self.fn.scope
        name = qualname(expr.func, self.module, scope)
        if name == "jax.random.split":
            return self.origin(expr.args[0])
        if name == "jax.random.fold_in" and len(expr.args) == 2:
            return None if self._may_vary(expr.args[1]) else self.origin(expr.args[0])
        if name in _SEEDED and isinstance(expr.args[0], ast.Constant):
            return ("seed", ast.unparse(expr))
        return None

    def _name(self, expr: ast.Name) -> tuple[str, str] | None:
        scope = self.module.scope_of.get(expr) or self.fn.scope
        owner = self.module.owner(expr.id, scope)
        if owner is None:
            return None
        if owner is self.fn.scope or _inside(owner, self.fn.scope):
            if owner is self.fn.scope and expr.id in self.fn.params.positional:
                bindings = owner.bindings[expr.id]
                return ("param", expr.id) if expr.id in self.unmapped and len(bindings) == 1 else None
            return self._local(expr.id, owner)
        return self._closed_over(expr.id, owner)

    def _local(self, name: str, owner: Scope) -> tuple[str, str] | None:
        bindings = owner.bindings.get(name) or []
        if len(bindings) != 1:
            return None
        b = bindings[0]
        if b.kind == ASSIGN and isinstance(b.value, ast.expr):
            return self.origin(b.value)
        if b.kind == OTHER:  # `k1, k2 = jax.random.split(key)`
            stmt = self.module.parents.get(self.module.parents.get(b.node, b.node), None)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple):
                return self.origin(stmt.value)
        return None

    def _closed_over(self, name: str, owner: Scope) -> tuple[str, str] | None:
        """A value of an enclosing function (any: the map cannot map it), or of the module
        when it is certainly a key (made by `jax.random.key`, `PRNGKey`, `split` or `fold_in`)."""
        b = unique(owner.bindings.get(name), ASSIGN)
        if owner.kind == "function":
            if b is None and len(owner.bindings.get(name) or []) != 1:
                return None
            return ("closure", name)
        if b is None or not isinstance(b.value, ast.Call):
            return None
        made = qualname(b.value.func, self.module, owner)
        keyish = made in _SEEDED or made in ("jax.random.split", "jax.random.fold_in")
        return ("closure", name) if keyish else None

    def _may_vary(self, expr: ast.expr) -> bool:
        """Whether a value folded into a key may vary along the map: it reads a parameter
        the map may map, or calls anything (`jax.lax.axis_index(...)` among them)."""
        for node in ast.walk(expr):
            if isinstance(node, ast.Call):
                return True
            if isinstance(node, ast.Name) and self.entries.get(node.id) is not False:
                return True
        return False


def _described(origin: tuple[str, str], kind: str, fn: FunctionInfo) -> str:
    how, name = origin
    if how == "param":
        return f"{name} ({'in_specs P()' if kind == 'shard_map' else 'in_axes None'})"
    if how == "closure":
        return f"{name} (closed over by {fn.qualname})"
    return f"a key made inside {fn.qualname} from a constant seed ({name})"


def _remedy(origin: tuple[str, str], kind: str, fn: FunctionInfo, unit: str, named: tuple[str, ...]) -> str:
    how, name = origin
    what = name if how != "seed" else "key"
    index = f"jax.lax.axis_index({named[0]!r})" if len(named) == 1 else f"jax.lax.axis_index({named!r})"
    fold = f"draw from jax.random.fold_in({what}, {index}) inside {fn.qualname}"
    split = f"jax.random.split({what}, n)"
    if how == "param" and kind in ("vmap", "pmap"):
        text = f"pass {split} for {what}, one key per {unit}, and map it (its in_axes entry 0)"
        return f"{text}; or {fold}" if named else text
    if named:
        return fold
    return f"pass the key in as an argument, {split}, one per {unit}, and map it (its in_axes entry 0)"


# ------------------------------------------------------------------ Flax NNX


def _check_nnx_broadcast(checker: SiteChecker) -> None:
    """An `nnx.vmap` that broadcasts a module the function calls (in_axes None, or
    `StateAxes({...: None})` without an RngState entry) in a file whose modules build an
    `nnx.Dropout`: its RNG streams are the same on every example."""
    site = checker.site
    if site.transform.kind != "vmap" or "in_axes" not in site.options:
        return
    fn = mapped_def(site)
    node = site.options["in_axes"]
    if fn is None or fn.cls is not None or not isinstance(node, ast.Tuple):
        return
    module = fn.module
    dropout = _dropout_line(module)
    if dropout is None:
        return
    params = fn.params.positional
    mapped = {p for p, entry in zip(params, node.elts, strict=False) if not _is_none(entry)}
    for i, entry in enumerate(node.elts):
        if i >= len(params) or not _broadcasts_rng_state(entry, module, site.scope):
            continue
        if not _calls(fn, params[i]) or _passes_rngs(fn, params[i], mapped):
            continue
        shown = ast.unparse(entry)
        checker.report_at(
            module,
            entry,
            "AX022",
            f"every example draws the same random numbers: nnx.Dropout (line {dropout}) draws from"
            f" {params[i]}'s RNG streams (in_axes entry {shown}), which are the same along the mapped axis;"
            f" {_RUNS}",
            "split the RNG streams, one per example: decorate the function with @nnx.split_rngs(splits=n)"
            f" and give {params[i]} the in_axes entry nnx.StateAxes({{nnx.RngState: 0, ...: None}})",
        )
        return


def _dropout_line(module: ModuleInfo) -> int | None:
    """The line of an `nnx.Dropout(...)` the file builds (not deterministic), if any."""
    for call in module.calls_of(frozenset({"Dropout"})):
        scope = module.scope_of.get(call)
        if scope is None or qualname(call.func, module, scope) != "flax.nnx.Dropout":
            continue
        if any(k.arg == "deterministic" and isinstance(k.value, ast.Constant) and k.value.value for k in call.keywords):
            continue
        return call.lineno
    return None


def _broadcasts_rng_state(entry: ast.expr, module: ModuleInfo, scope: Scope) -> bool:
    """`None`, or `nnx.StateAxes({...: None})` (every entry None, none naming RngState)."""
    if _is_none(entry):
        return True
    if not isinstance(entry, ast.Call) or len(entry.args) != 1 or not isinstance(entry.args[0], ast.Dict):
        return False
    if qualname(entry.func, module, scope) != "flax.nnx.StateAxes":
        return False
    table = entry.args[0]
    names: list[Any] = []
    for key, value in zip(table.keys, table.values, strict=True):
        if key is None or not _is_none(value):
            return False
        names.append(ast.unparse(key))
    return any(n == "..." for n in names) and not any("Rng" in n for n in names)


def _is_none(entry: ast.expr) -> bool:
    return isinstance(entry, ast.Constant) and entry.value is None


def _passes_rngs(fn: FunctionInfo, name: str, mapped: set[str]) -> bool:
    """Whether every call `fn` makes of its parameter `name` (the module, or a method of
    it) passes one of the mapped parameters as `rngs=` (Flax's randomness guide: the
    Dropout draws from the `Rngs` split per example and mapped, not from the broadcast
    module's streams)."""
    calls = [node for node in ast.walk(fn.node) if isinstance(node, ast.Call) and _callee_base(node) == name]
    return bool(calls) and all(
        any(k.arg == "rngs" and isinstance(k.value, ast.Name) and k.value.id in mapped for k in call.keywords)
        for call in calls
    )


def _callee_base(call: ast.Call) -> str | None:
    """The name a call is made on: `m` in `m(x)` and in `m.apply(x)`."""
    func = call.func
    base = func.value if isinstance(func, ast.Attribute) else func
    return base.id if isinstance(base, ast.Name) else None


def _calls(fn: FunctionInfo, name: str) -> bool:
    """Whether `fn` calls its parameter `name` (`m(x)`) or a method of it (`m.apply(x)`)."""
    return any(isinstance(node, ast.Call) and _callee_base(node) == name for node in ast.walk(fn.node))

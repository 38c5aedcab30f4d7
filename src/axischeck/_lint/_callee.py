"""Transform sites and the functions they map.

A *site* is one `vmap` / `pmap` / `shard_map` / `smap` application in the source: a call
(`jax.vmap(f, in_axes=...)`, `partial(jax.vmap, in_axes=...)(f)`, `ax.vmap(in_axes=...)(f)`)
or a decorator (`@jax.vmap`, `@partial(jax.pmap, axis_name="i")`, `@ax.vmap(in_axes=0)`).

A *callee* is what the site maps, as its callers see it: the positional parameters, what
the annotations (or `signature=`) declare about ranks, and the returned tuple's arity.
It is found only when certain: a `def` or lambda bound once, in this file or in another
file under the linted paths, seen through `functools.partial`, signature-keeping wrappers
(`jax.jit`, `jax.checkpoint`), bound methods (`self.f`) and inner transforms.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ._literals import UNKNOWN
from ._module import ASSIGN, CLASS, DEF, IMPORT, Binding, ClassInfo, FunctionInfo, ModuleInfo, Scope, unique
from ._names import CLASSMETHOD, PARTIAL, STATICMETHOD, TRANSFORMS, TRANSPARENT, WRAPPERS, TransformKind, qualname
from ._parsers import Ranks, annotation_ranks


@dataclass(eq=False, slots=True)
class Site:
    """One transform application."""

    transform: TransformKind
    module: ModuleInfo
    node: ast.expr  # the call, or the decorator expression
    scope: Scope  # where its options are evaluated
    options: dict[str, ast.expr]
    fun: ast.expr | None  # the mapped function (None: the decorated def)
    decorated: FunctionInfo | None = None
    decorator_index: int = -1
    readable: bool = True  # False when `*args` / `**kwargs` hide options
    _read: dict[str, Any] | None = None  # option values already read: every check asks for in_axes

    def option(self, name: str) -> Any:
        """The literal value of an option; UNKNOWN when not a literal or not readable."""
        if name not in self.options:
            return UNKNOWN if not self.readable else _DEFAULT
        if self._read is None:
            self._read = {}
        if name not in self._read:
            self._read[name] = self.module.value(self.options[name])
        return self._read[name]

    def has(self, name: str) -> bool:
        return name in self.options

    @property
    def label(self) -> str:
        return self.transform.kind


_DEFAULT: Any = object()  # an option left at its default


def is_default(value: Any) -> bool:
    return value is _DEFAULT


@dataclass(frozen=True, slots=True)
class Callee:
    """A function as a transform sees it."""

    name: str
    func: FunctionInfo | None
    positional: tuple[str, ...]
    posonly: int
    required: int
    varargs: bool
    kwonly: tuple[str, ...]
    varkw: bool
    self_param: bool  # the first positional parameter is a method's `self`, passed by the caller
    in_ranks: tuple[Ranks | None, ...]  # per positional parameter
    kw_ranks: dict[str, Ranks | None]
    out_arity: int | None  # every return is a tuple literal of this length
    out_ranks: Ranks | None
    out_tuple: bool
    sites: tuple[Site, ...] = ()  # transforms already applied, innermost first

    def param_list(self) -> str:
        return ", ".join(self.positional) if self.positional else "none"


@dataclass(frozen=True, slots=True)
class Match:
    transform: TransformKind
    options: dict[str, ast.expr]
    fun: ast.expr | None  # None: a factory / bare decorator
    readable: bool


class Resolver:
    """Finds sites and callees in one project (files under the linted paths)."""

    def __init__(self, find_module: Callable[[str, ModuleInfo], ModuleInfo | None]) -> None:
        self.find_module = find_module
        self._def_cache: dict[tuple[FunctionInfo, int], Callee | None] = {}
        self._active: set[tuple[FunctionInfo, int]] = set()
        self._matches: dict[tuple[int, int], Match | None] = {}  # syntax trees live as long as the run
        # Where functions and function values go (found and kept by `_flow`).
        self.def_uses: dict[FunctionInfo, list[Any]] = {}
        self.value_uses: dict[int, list[Any]] = {}
        # Per file and attribute name, its reads judged as calls of methods of the file's classes.
        self.method_reads: dict[tuple[ModuleInfo, str], Any] = {}
        # Functions whose every visible call runs only in code written to fail, by the
        # calls followed (found and kept by `_flow.written_to_fail`).
        self.failing_helpers: dict[tuple[FunctionInfo, int], bool] = {}
        # Per class, the method names a class of its file derived from it defines again;
        # per file, its classes by the names of their bases.
        self._redefined: dict[ClassInfo, set[str]] = {}
        self._derived: dict[ModuleInfo, dict[str, list[ClassInfo]]] = {}
        # Per file, the classes that define a method of each name.
        self._method_classes: dict[ModuleInfo, dict[str, frozenset[ClassInfo]]] = {}
        # What each visible call passes for a parameter (set by the project's interpreter).
        self.parameters: Callable[[FunctionInfo, str], list[tuple[ast.expr, ModuleInfo]] | None] | None = None

    def clear(self) -> None:
        """Forget every fact found (they point into syntax trees the run is done with)."""
        caches = (self._def_cache, self._active, self._matches, self.def_uses, self.value_uses, self.method_reads)
        for cache in (*caches, self.failing_helpers, self._redefined, self._derived, self._method_classes):
            cache.clear()

    # ------------------------------------------------------------------ sites

    def match(self, expr: ast.expr, module: ModuleInfo, scope: Scope) -> Match | None:
        """`expr` as a transform application (direct, factory or bare), or None."""
        key = (id(expr), id(scope))
        if key not in self._matches:
            self._matches[key] = self._match(expr, module, scope)
        return self._matches[key]

    def _match(self, expr: ast.expr, module: ModuleInfo, scope: Scope) -> Match | None:
        if isinstance(expr, ast.Attribute) and expr.attr not in _LAST_PARTS:
            return None  # `jnp.ones`, `x.sum`: no dotted name of a transform ends so
        if isinstance(expr, (ast.Name, ast.Attribute)):
            t = TRANSFORMS.get(qualname(expr, module, scope) or "")
            return Match(t, {}, None, True) if t is not None else None
        if not isinstance(expr, ast.Call):
            return None
        func = expr.func
        if isinstance(func, ast.Attribute) and func.attr not in _LAST_PARTS:
            return None
        if isinstance(func, ast.Call):  # T(options...)(f) or partial(T, ...)(f)
            inner = self.match(func, module, scope)
            if inner is None or inner.fun is not None or not expr.args or isinstance(expr.args[0], ast.Starred):
                return None
            return Match(inner.transform, inner.options, expr.args[0], inner.readable and module.spelled_out(expr))
        name = qualname(func, module, scope)
        if name is None:
            return None
        t = TRANSFORMS.get(name)
        args = list(expr.args)
        if t is None and name in PARTIAL and args and not isinstance(args[0], ast.Starred):
            t = TRANSFORMS.get(qualname(args[0], module, scope) or "")
            args = args[1:]
        if t is None:
            return None
        readable = module.spelled_out(expr)
        options: dict[str, ast.expr] = {}
        fun: ast.expr | None = None
        if args and not isinstance(args[0], ast.Starred):
            fun = args[0]
            for opt, value in zip(t.positional, args[1:], strict=False):
                if isinstance(value, ast.Starred):
                    break
                options[opt] = value
            if len(args) - 1 > len(t.positional):
                readable = False
        for k in expr.keywords:
            if k.arg is not None:
                options[k.arg] = k.value
        return Match(t, options, fun, readable)

    def sites(self, module: ModuleInfo) -> list[Site]:
        """Every transform application in `module`, in source order."""
        found: list[Site] = []
        for call in module.calls_of(_LAST_PARTS):
            scope = module.scope_of[call]
            m = self.match(call, module, scope)
            if m is not None and m.fun is None:
                # A factory or a partial of a transform: the call of its result is the
                # application (`partial(jax.vmap, in_axes=0)(f)`, `ax.vmap(in_axes=0)(f)`).
                outer = module.parents.get(call)
                if not isinstance(outer, ast.Call) or outer.func is not call:
                    continue
                call, scope = outer, module.scope_of[outer]
                m = self.match(call, module, scope)
            if m is not None and m.fun is not None:
                found.append(Site(m.transform, module, call, scope, m.options, m.fun, readable=m.readable))
        for fn in module.functions:
            for i, dec in enumerate(fn.decorators):
                m = self.match(dec, module, fn.outer)
                if m is not None and m.fun is None:
                    found.append(Site(m.transform, module, dec, fn.outer, m.options, None, fn, i, m.readable))
        found.sort(key=lambda s: (s.node.lineno, s.node.col_offset))
        return found

    # ---------------------------------------------------------------- callees

    def site_callee(self, site: Site) -> Callee | None:
        """What `site` maps."""
        if site.decorated is not None:
            return self.def_callee(site.decorated, below=site.decorator_index)
        assert site.fun is not None
        return self.callee(site.fun, site.module, site.scope)

    def callee(self, expr: ast.expr, module: ModuleInfo, scope: Scope, depth: int = 0) -> Callee | None:
        if depth > 12:
            return None
        if isinstance(expr, ast.Lambda):
            return self.def_callee(module.function_of[expr])
        if isinstance(expr, ast.Name):
            return self._binding_callee(module.lookup(expr.id, scope), module, depth)
        if isinstance(expr, ast.Attribute):
            return self._attribute_callee(expr, module, scope, depth)
        if isinstance(expr, ast.Call):
            return self._call_callee(expr, module, scope, depth)
        return None

    def _binding_callee(self, bindings: list[Binding] | None, module: ModuleInfo, depth: int) -> Callee | None:
        if not bindings:
            return None
        b = bindings[0]
        if len(bindings) == 1 and b.kind == DEF:
            assert isinstance(b.value, FunctionInfo)
            return self.def_callee(b.value)
        if len(bindings) == 1 and b.kind == ASSIGN and b.scope is not None:
            assert isinstance(b.value, ast.expr)
            return self.callee(b.value, module, b.scope, depth + 1)
        if all(x.kind == IMPORT for x in bindings) and len({x.value for x in bindings}) == 1:
            return self._imported_callee(str(b.value), module, depth)
        if len(bindings) == 1 and isinstance(b.node, ast.arg) and b.scope is not None and b.scope.function:
            return self._parameter_callee(b.scope.function, b.node.arg, depth)
        return None

    def _parameter_callee(self, fn: FunctionInfo, name: str, depth: int) -> Callee | None:
        """A function parameter that every visible call of `fn` binds to one function
        (`def mse(model, data): jax.vmap(model)(data)` with `mse(pair_loss, ...)` only)."""
        sources = self.parameters(fn, name) if self.parameters is not None else None
        if not sources:
            return None
        found: Callee | None = None
        for expr, module in sources:
            if not isinstance(expr, ast.Name) or expr not in module.scope_of:
                return None
            c = self.callee(expr, module, module.scope_of[expr], depth + 1)
            if c is None or c.func is None or c.sites or (found is not None and c.func is not found.func):
                return None
            found = c
        return found

    def _imported_callee(self, name: str, module: ModuleInfo, depth: int) -> Callee | None:
        """A function defined in another linted file (`from .models import loss`)."""
        if name in TRANSFORMS or name.startswith(("jax.", "axischeck.", "numpy.", "functools.")):
            return None
        rest = name.lstrip(".")
        dots = name[: len(name) - len(rest)]
        head, _, attr = rest.rpartition(".")
        other = self.find_module(dots + head, module) if (dots or head) else None
        if other is None or other is module or not attr:
            return None
        return self._binding_callee(other.scope.bindings.get(attr), other, depth + 1)

    def _attribute_callee(self, expr: ast.Attribute, module: ModuleInfo, scope: Scope, depth: int) -> Callee | None:
        base = expr.value
        if isinstance(base, ast.Name):
            bindings = module.lookup(base.id, scope)
            owner = module.owner(base.id, scope)
            fn = owner.function if owner is not None else None
            if (
                fn is not None
                and fn.cls is not None
                and bindings is not None
                and len(bindings) == 1
                and fn.params.positional[:1] == (base.id,)
                and not any(_is(d, module, fn.outer, STATICMETHOD) for d in fn.decorators)
            ):
                if expr.attr in module.stored_attrs:
                    return None  # `self.f = ...` somewhere: the attribute may not be the method
                if expr.attr in self._redefined_below(fn.cls, module):
                    return None  # `self.f` of a subclass instance is the subclass's f
                defs = fn.cls.methods.get(expr.attr)
                if any(_is(d, module, fn.outer, CLASSMETHOD) for d in fn.decorators):
                    # `cls.method` in a classmethod: bound only if that method is a classmethod too
                    return self._method(defs, bound=defs is not None and _is_classmethod(defs))
                return self._method(defs, bound=True)  # `self.method`
            cls_binding = unique(bindings, CLASS)
            if cls_binding is not None:  # `Class.method`: the plain function
                cls = cls_binding.value
                return self._method(getattr(cls, "methods", {}).get(expr.attr), bound=False)
        name = qualname(expr, module, scope)
        if name is not None:
            return self._imported_callee(name, module, depth)
        return None

    def _redefined_below(self, cls: ClassInfo, module: ModuleInfo) -> set[str]:
        """The method names that a class of the file derived from `cls` (directly or not)
        defines again: `self.name` in `cls`'s methods may then be either function."""
        if cls not in self._redefined:
            by_base = self._classes_by_base(module)
            names: set[str] = set()
            seen, pending = {cls.name}, [cls.name]
            while pending:
                for other in by_base.get(pending.pop(), ()):
                    names.update(other.methods)
                    if other.name not in seen:
                        seen.add(other.name)
                        pending.append(other.name)
            self._redefined[cls] = names
        return self._redefined[cls]

    def _classes_by_base(self, module: ModuleInfo) -> dict[str, list[ClassInfo]]:
        """The file's classes by the names of their bases, indexed once per file."""
        if module not in self._derived:
            by_base: dict[str, list[ClassInfo]] = {}
            for other in module.classes:
                for base in _base_names(other.node):
                    by_base.setdefault(base, []).append(other)
            self._derived[module] = by_base
        return self._derived[module]

    def classes_with_method(self, module: ModuleInfo, name: str) -> frozenset[ClassInfo]:
        """The classes of the file that define a method `name`, indexed once per file."""
        if module not in self._method_classes:
            by_name: dict[str, set[ClassInfo]] = {}
            for fn in module.functions:
                if fn.cls is not None:
                    by_name.setdefault(fn.name, set()).add(fn.cls)
            self._method_classes[module] = {n: frozenset(classes) for n, classes in by_name.items()}
        return self._method_classes[module].get(name, frozenset())

    def _method(self, defs: list[FunctionInfo] | None, bound: bool) -> Callee | None:
        if defs is None or len(defs) != 1:
            return None
        fn = defs[0]
        static = any(_is(d, fn.module, fn.outer, STATICMETHOD) for d in fn.decorators)
        c = self.def_callee(fn)
        if c is None:
            return None
        if static or not bound:
            return replace(c, self_param=False) if static else c
        return bind_positional(c, 1)

    def _call_callee(self, expr: ast.Call, module: ModuleInfo, scope: Scope, depth: int) -> Callee | None:
        m = self.match(expr, module, scope)
        if m is not None:
            if m.fun is None:
                return None
            inner = self.callee(m.fun, module, scope, depth + 1)
            if inner is None:
                return None
            site = Site(m.transform, module, expr, scope, m.options, m.fun, readable=m.readable)
            return lift(inner, site)
        if not module.spelled_out(expr):
            return None
        name = qualname(expr.func, module, scope)
        if name in PARTIAL and expr.args:  # partial(f, a, b): f without its first parameters
            if isinstance(expr.args[0], ast.Call) or _transparent(expr.args[0], module, scope):
                return None
            inner = self.callee(expr.args[0], module, scope, depth + 1)
            if inner is None:
                return None
            for k in expr.keywords:
                if k.arg in inner.positional:
                    return None  # partial(f, y=1): y is still positional, but passing it again fails
            inner = replace(inner, kwonly=tuple(p for p in inner.kwonly if p not in {k.arg for k in expr.keywords}))
            return bind_positional(inner, len(expr.args) - 1)
        if name in TRANSPARENT and expr.args:  # jax.jit(f, ...)
            return self.callee(expr.args[0], module, scope, depth + 1)
        if name in WRAPPERS and expr.args:  # jax.grad(f): f's parameters, other outputs
            inner = self.callee(expr.args[0], module, scope, depth + 1)
            if inner is None:
                return None
            return replace(inner, out_arity=None, out_ranks=None, out_tuple=False)
        if isinstance(expr.func, ast.Call) and expr.args:  # partial(jax.jit, ...)(f)
            inner_call = expr.func
            if qualname(inner_call.func, module, scope) in PARTIAL and inner_call.args:
                if qualname(inner_call.args[0], module, scope) in TRANSPARENT:
                    return self.callee(expr.args[0], module, scope, depth + 1)
        return None

    def def_callee(self, fn: FunctionInfo, below: int = -1) -> Callee | None:
        """`fn` with its decorators applied, or only those below position `below`."""
        key = (fn, below)
        if key in self._def_cache:
            return self._def_cache[key]
        if key in self._active:
            return None
        self._active.add(key)
        try:
            result = self._def_callee(fn, below)
        finally:
            self._active.discard(key)
        self._def_cache[key] = result
        return result

    def _def_callee(self, fn: FunctionInfo, below: int) -> Callee | None:
        c = raw_callee(fn)
        decorators = fn.decorators
        start = len(decorators) - 1
        stop = below if below >= 0 else -1
        for i in range(start, stop, -1):
            dec = decorators[i]
            if _is(dec, fn.module, fn.outer, STATICMETHOD):
                c = replace(c, self_param=False)
                continue
            m = self.match(dec, fn.module, fn.outer)
            if m is not None and m.fun is None:
                c = lift(c, Site(m.transform, fn.module, dec, fn.outer, m.options, None, fn, i, m.readable))
                continue
            if _transparent(dec, fn.module, fn.outer):
                continue
            return None  # an unknown decorator: who knows what it returns
        return c


# The last part of every dotted name `match` recognises (`jax.vmap`, `functools.partial`).
_LAST_PARTS = frozenset(name.rpartition(".")[2] for name in (*TRANSFORMS, *PARTIAL))


def _is(expr: ast.expr, module: ModuleInfo, scope: Scope, names: frozenset[str]) -> bool:
    return isinstance(expr, ast.Name) and qualname(expr, module, scope) in names


def _base_names(node: ast.ClassDef) -> set[str]:
    """The names a class statement derives from (`Base`, `mod.Base`: "Base")."""
    return {b.id if isinstance(b, ast.Name) else b.attr for b in node.bases if isinstance(b, (ast.Name, ast.Attribute))}


def _is_classmethod(defs: list[FunctionInfo]) -> bool:
    return any(_is(d, fn.module, fn.outer, CLASSMETHOD) for fn in defs for d in fn.decorators)


def _transparent(expr: ast.expr, module: ModuleInfo, scope: Scope) -> bool:
    """`jax.jit`, `jax.jit(static_argnums=...)`-style factories, `partial(jax.jit, ...)`."""
    if isinstance(expr, ast.Call):
        name = qualname(expr.func, module, scope)
        if name in PARTIAL and expr.args:
            return qualname(expr.args[0], module, scope) in TRANSPARENT and len(expr.args) == 1
        return name in TRANSPARENT and not expr.args
    return qualname(expr, module, scope) in TRANSPARENT


# -------------------------------------------------------------- callee algebra


def raw_callee(fn: FunctionInfo) -> Callee:
    p = fn.params
    notes = p.annotations
    # The text that names an annotation is for the parser's errors: made only for one that is written.
    ranks = tuple(
        _ranks(notes[name], f"parameter {name!r} of {fn.name}")[0] if name in notes else None for name in p.positional
    )
    kw_ranks = {name: _ranks(notes.get(name), name)[0] for name in p.kwonly}
    out_ranks, out_tuple = _ranks(notes["return"], f"the return of {fn.name}") if "return" in notes else (None, False)
    return Callee(
        name=fn.qualname,
        func=fn,
        positional=p.positional,
        posonly=p.posonly,
        required=p.required,
        varargs=p.varargs is not None,
        kwonly=p.kwonly,
        varkw=p.varkw is not None,
        self_param=fn.cls is not None and bool(p.positional),
        in_ranks=ranks,
        kw_ranks=kw_ranks,
        out_arity=returns_arity(fn),
        out_ranks=out_ranks,
        out_tuple=out_tuple,
    )


def _ranks(annotation: ast.expr | None, where: str) -> tuple[Ranks | None, bool]:
    """Leaf ranks an annotation declares (`Annotated[Array, "a b"]`, `Float[Array, "n"]`)."""
    if annotation is None or not _array_annotation(annotation):
        return None, False
    return annotation_ranks(annotation, where)


_ARRAY_TYPES = frozenset({"Array", "ArrayLike", "ndarray", "Tensor", "ShapeDtypeStruct", "Float", "Shaped"})


def _array_annotation(node: ast.expr) -> bool:
    """`Annotated[X, "a b"]` declares dims only when X is an array type (other tools put
    documentation strings in Annotated: `Annotated[float, "learning rate"]`); jaxtyping's
    `Float[Array, "a b"]`, `PyTree[...]` and `tuple[...]` are read as the engine reads them."""
    if not isinstance(node, ast.Subscript):
        return False
    head = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", "")
    if head != "Annotated":
        return True
    first = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) and node.slice.elts else node.slice
    meta = node.slice.elts[1:] if isinstance(node.slice, ast.Tuple) else []
    if any(isinstance(m, (ast.Dict, ast.Tuple, ast.List)) for m in meta):
        return True  # a pytree of dims
    while isinstance(first, ast.Subscript):  # Float[Array, ...] inside, or list[...]
        first = first.value
    name = first.attr if isinstance(first, ast.Attribute) else getattr(first, "id", "")
    return isinstance(name, str) and (name in _ARRAY_TYPES or name.endswith("Array"))


def bind_positional(c: Callee, n: int) -> Callee | None:
    """The callee after its first `n` positional arguments are given (a bound method, a partial)."""
    if n == 0:
        return c
    if n > len(c.positional):
        if not c.varargs:
            return None
        return replace(c, positional=(), posonly=0, required=0, in_ranks=(), self_param=False)
    return replace(
        c,
        positional=c.positional[n:],
        posonly=max(0, c.posonly - n),
        required=max(0, c.required - n),
        in_ranks=c.in_ranks[n:],
        self_param=False,
    )


def returns_arity(fn: FunctionInfo) -> int | None:
    """k when every return is a k-tuple literal and the function cannot fall off its end."""
    body = fn.node.body
    if isinstance(body, list) and isinstance(body[-1], ast.Return) and not isinstance(body[-1].value, ast.Tuple):
        return None  # the last statement returns something else: no need to read the others
    returns = fn.returns
    if not returns:
        return None
    lengths = set()
    for v in returns:
        if not isinstance(v, ast.Tuple) or any(isinstance(e, ast.Starred) for e in v.elts):
            return None
        lengths.add(len(v.elts))
    return lengths.pop() if len(lengths) == 1 else None


def lift(c: Callee, site: Site) -> Callee:
    """The callee seen through `site`: ranks grow by one where an argument is mapped."""
    kind = site.transform.kind
    if kind == "shard_map":
        return replace(c, sites=(*c.sites, site))
    in_axes = site.option("in_axes")
    out_axes = site.option("out_axes")
    if is_default(in_axes):
        in_axes = 0 if site.transform.lib != "equinox" else UNKNOWN  # Equinox: if_array(0)
    if is_default(out_axes):
        out_axes = 0 if site.transform.lib != "equinox" else UNKNOWN
    if kind == "smap" and not site.has("in_axes"):
        in_axes = UNKNOWN  # smap infers in_axes from the arguments
    return replace(
        c,
        in_ranks=tuple(_lift_ranks(r, _entry(in_axes, i)) for i, r in enumerate(c.in_ranks)),
        kw_ranks={k: _lift_ranks(r, 0) for k, r in c.kw_ranks.items()},
        out_ranks=_lift_out(c.out_ranks, c.out_tuple, out_axes),
        sites=(*c.sites, site),
    )


def _entry(axes: Any, i: int) -> Any:
    if isinstance(axes, (tuple, list)):
        return axes[i] if i < len(axes) else UNKNOWN
    return axes


def _lift_ranks(ranks: Ranks | None, axis: Any) -> Ranks | None:
    if ranks is None or axis is UNKNOWN:
        return None
    if axis is None:
        return ranks
    if type(axis) is int:
        return tuple(None if r is None else r + 1 for r in ranks)
    return None


def _lift_out(ranks: Ranks | None, is_tuple: bool, out_axes: Any) -> Ranks | None:
    if ranks is None or out_axes is UNKNOWN:
        return None
    if isinstance(out_axes, (tuple, list)):
        if not is_tuple or len(out_axes) != len(ranks):
            return None
        return tuple(
            None if r is None or a is UNKNOWN else r if a is None else r + 1 if type(a) is int else None
            for r, a in zip(ranks, out_axes, strict=True)
        )
    return _lift_ranks(ranks, out_axes)

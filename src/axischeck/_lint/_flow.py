"""Where a function value goes: the calls and transforms that receive it.

`uses_of_value(expr)` follows a function-valued expression (a name bound to a `def`, a
transform's result) through assignments and signature-keeping wrappers to the places that
use it: a call, another transform, a JAX function that calls it at once (`lax.scan`), or
somewhere the linter cannot follow (`unknown`). The checks that need certainty about all
uses treat a single unknown use as "cannot tell".
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import Literal

from ._callee import Resolver, Site
from ._module import ASSIGN, CLASS, DEF, ClassInfo, FunctionInfo, ModuleInfo, Scope, enclosing_function, unique
from ._names import CLASSMETHOD, IMMEDIATE, PARTIAL, STATICMETHOD, TRANSPARENT, WRAPPERS, qualname

UseKind = Literal["call", "transform", "immediate", "unknown"]

# Methods of a transformed function that take the same arguments as a call: axischeck's
# `predict` / `explain` / `infer_signature`, and `lower` / `trace` of a jitted one.
CALL_METHODS = frozenset({"predict", "explain", "infer_signature", "lower", "trace"})

# Calls whose `with` block (or callable argument) is expected to raise.
_RAISES = frozenset(
    {"raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp", "assert_raises", "assert_raises_regex"}
)


def expects_failure(module: ModuleInfo, node: ast.AST) -> bool:
    """`node` sits in code written to fail: a `with pytest.raises(...)` / `self.assertRaises...`
    block, or a callable handed to `assertRaises(Error, fn, ...)`."""
    if module.calls.keys().isdisjoint(_RAISES):
        return False  # the file calls no `raises` / `assertRaises...`: nothing in it is written to fail
    child: ast.AST = node
    parent = module.parents.get(node)
    while parent is not None:
        if isinstance(parent, (ast.With, ast.AsyncWith)) and child in parent.body:
            if any(_raises(item.context_expr) for item in parent.items):
                return True
        elif isinstance(parent, ast.Call) and child in parent.args and _raises(parent):
            return True
        elif isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            return False
        child, parent = parent, module.parents.get(parent)
    return False


def written_to_fail(resolver: Resolver, module: ModuleInfo, node: ast.AST, depth: int = 0) -> bool:
    """`node` runs only in code written to fail: in a `pytest.raises` block (see
    `expects_failure`), or in a function whose every visible call runs only there (a
    test's helper that makes the failing call), followed up to `_HELPER_DEPTH` calls."""
    if expects_failure(module, node):
        return True
    if depth >= _HELPER_DEPTH or module.calls.keys().isdisjoint(_RAISES):
        return False  # a file that expects no failure holds no helper written to fail
    fn = enclosing_function(module, node)
    if fn is None or isinstance(fn.node, ast.Lambda):
        return False
    key = (fn, depth)  # a helper called from many places is judged once at each depth
    if key not in resolver.failing_helpers:
        calls = uses_of_def(resolver, fn)
        resolver.failing_helpers[key] = bool(calls) and all(
            u.kind == "call" and written_to_fail(resolver, u.module, u.node, depth + 1) for u in calls
        )
    return resolver.failing_helpers[key]


_HELPER_DEPTH = 3


def _raises(expr: ast.expr) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in _RAISES


@dataclass(frozen=True, slots=True)
class Use:
    kind: UseKind
    node: ast.AST  # the Call (call / immediate), the site's node (transform), or where it got lost
    module: ModuleInfo
    site: Site | None = None
    keeps_signature: bool = True  # False after grad / value_and_grad: other outputs
    implicit: int = 0  # positional arguments the call passes without writing them (a bound self)
    bound: tuple[ast.Call, ...] = ()  # functools.partial calls on the way to the call, innermost first

    def spelled_out(self) -> bool:
        """Every argument the function receives at the call is written out: no `*args` or
        `**kwargs` in the call (the partials on the way have none: no other is followed)."""
        assert isinstance(self.node, ast.Call)
        return self.module.spelled_out(self.node)

    def arguments(self) -> tuple[list[ast.expr], list[ast.keyword]]:
        """What the function receives at a call: the partials' arguments, then the call's
        (a keyword given again at the call replaces the partial's, as functools does)."""
        assert isinstance(self.node, ast.Call)
        if not self.bound:
            return self.node.args, self.node.keywords  # the call's own (the lists are shared: not to be changed)
        args: list[ast.expr] = []
        keywords: dict[str | None, ast.keyword] = {}
        for call in (*self.bound, self.node):
            args.extend(call.args[1:] if call is not self.node else call.args)
            for k in call.keywords:
                keywords[k.arg if k.arg is not None else f"**{len(keywords)}"] = k
        return args, list(keywords.values())


def uses_of_def(resolver: Resolver, fn: FunctionInfo) -> list[Use]:
    """Uses of the object a `def` statement binds (its decorators applied). Several checks
    ask for the same function's uses: they are found once (the list is shared, not to be changed)."""
    if fn not in resolver.def_uses:
        resolver.def_uses[fn] = _def_uses(resolver, fn)
    uses: list[Use] = resolver.def_uses[fn]
    return uses


def _def_uses(resolver: Resolver, fn: FunctionInfo) -> list[Use]:
    module = fn.module
    if isinstance(fn.node, ast.Lambda):
        return uses_of_value(resolver, module, fn.node)
    if fn.cls is not None:
        return _method_uses(resolver, fn)
    bindings = fn.outer.bindings.get(fn.name, [])
    if len(bindings) != 1 or bindings[0].kind != DEF:
        return [Use("unknown", fn.node, module)]
    keeps_signature = True  # every decorator keeps the function's signature (a grad does not)
    for dec in fn.decorators:
        keeps_its_signature = _known_wrapper(resolver, dec, module, fn)
        if keeps_its_signature is None:
            return [Use("unknown", dec, module)]
        keeps_signature = keeps_signature and keeps_its_signature
    uses: list[Use] = []
    for load in module.reads(fn.name, fn.outer):
        uses.extend(_value_uses(resolver, module, load, 1, keeps_signature))
    return uses


def _method_uses(resolver: Resolver, fn: FunctionInfo) -> list[Use]:
    """Calls `obj.name(...)` of a method: every read of `.name` in the file, when no other
    class here has a `name`, each read is a call, and each `obj` is known to be an instance
    of the class (`self` in its methods, `Cls(...)`, a name bound once to `Cls(...)`) or the
    class itself. Anything else may be another object's `name`: then the uses are unknown."""
    module = fn.module
    assert fn.cls is not None
    if fn.name in module.stored_attrs or len(fn.cls.methods.get(fn.name, [])) != 1:
        return [Use("unknown", fn.node, module)]
    for dec in fn.decorators:
        if _known_wrapper(resolver, dec, module, fn) is not True or _is_static(dec, module, fn):
            return [Use("unknown", dec, module)]
    reads = _method_reads(resolver, module, fn.name)
    if reads.unknown is not None:
        return [Use("unknown", reads.unknown, module)]
    return [
        Use("call", call, module, implicit=0 if kind == "class" else 1) for call, kind in reads.calls.get(fn.cls, ())
    ]


@dataclass(frozen=True, slots=True)
class _MethodReads:
    """The reads `obj.name` of one attribute name in a file, judged once for every method
    `name` of the file's classes."""

    unknown: ast.Attribute | None  # the first read that may be another object's `name`
    calls: dict[ClassInfo, list[tuple[ast.Call, str]]]  # by the class `obj` surely is (or is an instance of)


def _method_reads(resolver: Resolver, module: ModuleInfo, name: str) -> _MethodReads:
    key = (module, name)
    if key not in resolver.method_reads:
        resolver.method_reads[key] = _judge_method_reads(resolver, module, name)
    reads: _MethodReads = resolver.method_reads[key]
    return reads


def _judge_method_reads(resolver: Resolver, module: ModuleInfo, name: str) -> _MethodReads:
    """Each read of `.name` is a call whose receiver is surely one of the classes defining
    `name` (or an instance of it), or the uses of every method `name` are unknown."""
    with_method = resolver.classes_with_method(module, name)
    calls: dict[ClassInfo, list[tuple[ast.Call, str]]] = {}
    for attr in module.attr_loads.get(name, ()):
        call = module.parents.get(attr)
        if not isinstance(call, ast.Call) or call.func is not attr:
            return _MethodReads(attr, {})
        receivers = _receivers(module, attr.value)
        if with_method.isdisjoint(receivers):
            return _MethodReads(attr, {})
        for cls, kind in receivers.items():
            calls.setdefault(cls, []).append((call, kind))
    return _MethodReads(None, calls)


def _receivers(module: ModuleInfo, base: ast.expr) -> dict[ClassInfo, str]:
    """The classes `base` surely is ("class") or surely is an instance of ("instance"):
    `Cls`, `Cls(...)`, `self` in a method of `Cls`, a name bound once to `Cls(...)`."""
    if isinstance(base, ast.Call):
        cls = _class_named(module, base.func)
        return {} if cls is None else {cls: "instance"}
    if not isinstance(base, ast.Name) or base.id not in module.loads or base not in module.scope_of:
        return {}
    found: dict[ClassInfo, str] = {}
    named = _class_named(module, base)
    if named is not None:
        found[named] = "class"
    scope = module.scope_of[base]
    owner = module.owner(base.id, scope)
    bindings = module.lookup(base.id, scope)
    if owner is None or bindings is None or len(bindings) != 1:
        return found
    method = owner.function
    if method is not None and method.cls is not None and method.params.positional[:1] == (base.id,):
        found.setdefault(method.cls, "instance")  # self in a method of the class
    b = bindings[0]
    built = _class_named(module, b.value.func) if b.kind == ASSIGN and isinstance(b.value, ast.Call) else None
    if built is not None:
        found.setdefault(built, "instance")  # obj = Cls(...)
    return found


def _class_named(module: ModuleInfo, expr: ast.expr) -> ClassInfo | None:
    """The class of the file `expr` names: a name bound only by that class statement."""
    if not isinstance(expr, ast.Name) or expr not in module.scope_of:
        return None
    b = unique(module.lookup(expr.id, module.scope_of[expr]), CLASS)
    return b.value if b is not None and isinstance(b.value, ClassInfo) else None


def _is_static(dec: ast.expr, module: ModuleInfo, fn: FunctionInfo) -> bool:
    return isinstance(dec, ast.Name) and qualname(dec, module, fn.outer) in STATICMETHOD


def _known_wrapper(resolver: Resolver, dec: ast.expr, module: ModuleInfo, fn: FunctionInfo) -> bool | None:
    """True for a signature-keeping decorator (a transform, jit), False for grad-like ones,
    None for one the linter does not know."""
    m = resolver.match(dec, module, fn.outer)
    if m is not None and m.fun is None:
        return True
    name = qualname(dec.func if isinstance(dec, ast.Call) else dec, module, fn.outer)
    if name in TRANSPARENT or name in STATICMETHOD:
        return True
    if name in PARTIAL and isinstance(dec, ast.Call) and dec.args:
        inner = qualname(dec.args[0], module, fn.outer)
        if inner in TRANSPARENT:
            return True
        if inner in WRAPPERS:
            return False
    if name in WRAPPERS or name in CLASSMETHOD:
        return False if name in WRAPPERS else None
    return None


def uses_of_value(resolver: Resolver, module: ModuleInfo, expr: ast.AST) -> list[Use]:
    """Where the function value of `expr` is used (found once per expression, like `uses_of_def`)."""
    key = id(expr)  # the syntax trees live as long as the run
    if key not in resolver.value_uses:
        resolver.value_uses[key] = _value_uses(resolver, module, expr, 0, True)
    uses: list[Use] = resolver.value_uses[key]
    return uses


def _value_uses(resolver: Resolver, module: ModuleInfo, expr: ast.AST, depth: int, keeps: bool) -> list[Use]:
    if depth > 20:
        return [Use("unknown", expr, module)]
    parent = module.parents.get(expr)
    if isinstance(parent, ast.Attribute) and parent.attr in CALL_METHODS:
        grand = module.parents.get(parent)
        if isinstance(grand, ast.Call) and grand.func is parent:  # f.predict(x, y), f.lower(x, y)
            return [Use("call", grand, module, keeps_signature=keeps)]
    if isinstance(parent, ast.Call):
        if parent.func is expr:
            return [Use("call", parent, module, keeps_signature=keeps)]
        scope = module.scope_of[parent]
        m = resolver.match(parent, module, scope)
        if m is not None and m.fun is expr:
            site = Site(m.transform, module, parent, scope, m.options, m.fun, readable=m.readable)
            return [Use("transform", parent, module, site, keeps)]
        if parent.args and parent.args[0] is expr:
            name = qualname(parent.func, module, scope)
            if name in TRANSPARENT:
                return _value_uses(resolver, module, parent, depth + 1, keeps)
            if name in WRAPPERS:
                return _value_uses(resolver, module, parent, depth + 1, False)
            if name in PARTIAL:
                if not module.spelled_out(parent):
                    return _value_uses(resolver, module, parent, depth + 1, False)
                return [
                    replace(u, bound=(parent, *u.bound)) if u.kind == "call" else u
                    for u in _value_uses(resolver, module, parent, depth + 1, keeps)
                ]
            if isinstance(parent.func, ast.Call) and _is_partial_of(parent.func, module, scope, TRANSPARENT):
                return _value_uses(resolver, module, parent, depth + 1, keeps)
        name = qualname(parent.func, module, scope)
        if name in IMMEDIATE:
            positions = IMMEDIATE[name]
            if any(i < len(parent.args) and parent.args[i] is expr for i in positions):
                return [Use("immediate", parent, module, keeps_signature=False)]
        return [Use("unknown", parent, module)]
    if isinstance(parent, (ast.List, ast.Tuple)):
        grand = module.parents.get(parent)
        if isinstance(grand, ast.Call) and qualname(grand.func, module, module.scope_of[grand]) == "jax.lax.switch":
            if len(grand.args) > 1 and grand.args[1] is parent:
                return [Use("immediate", grand, module, keeps_signature=False)]
        return [Use("unknown", parent, module)]
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is expr:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        if len(targets) == 1 and isinstance(targets[0], ast.Name):
            name = targets[0].id
            owner = _assign_owner(module, parent, name, module.scope_of.get(expr))
            if owner is not None:
                uses: list[Use] = []
                for load in module.reads(name, owner):
                    uses.extend(_value_uses(resolver, module, load, depth + 1, keeps))
                return uses
    if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef) and expr in parent.decorator_list:
        return [Use("unknown", parent, module)]
    return [Use("unknown", parent if parent is not None else expr, module)]


def _assign_owner(module: ModuleInfo, assign: ast.AST, name: str, scope: Scope | None) -> Scope | None:
    """The scope whose only binding of `name` is this assignment (not a class body)."""
    if scope is None or scope.kind == "class":
        return None  # a class attribute is read as self.name: not followed
    bindings = scope.bindings.get(name, [])
    if len(bindings) == 1 and bindings[0].kind == ASSIGN and bindings[0].node is assign:
        return scope
    return None


def _is_partial_of(call: ast.Call, module: ModuleInfo, scope: Scope, names: frozenset[str]) -> bool:
    return (
        qualname(call.func, module, scope) in PARTIAL
        and bool(call.args)
        and qualname(call.args[0], module, scope) in names
    )

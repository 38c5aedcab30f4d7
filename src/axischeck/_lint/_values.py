"""What an expression holds, read from the source without running it: a small interpreter.

Real code keeps the facts lint needs one step away from the transform: `in_axes` in a
module constant or a default parameter, arrays built a few lines up, a `partial` that
binds arguments. `Values.of(expr, module)` follows those steps and returns

- Python constants (int, float, str, None, ...), and tuples, lists and dicts of values;
- `Array(shape)` for arrays the file builds with a shape it states (see `_shapes`);
- `DEVICES` for `jax.device_count()` (an int >= 1 the file cannot know);
- `UNKNOWN` for anything else, in whole or in part.

A name is followed only when its value is certain at every read: it is bound exactly once
in its scope (two assignments, an augmented assignment, a loop variable, `global` /
`nonlocal`, `del` all make it unknown), and a list, dict or NumPy array it holds is never
handed anywhere that could change it (`IN.append(1)`, `IN[0] = 1`, `f(IN)`). A parameter
is its default value when every call of its function is visible and leaves it out. Nothing
is evaluated: the interpreter only reads literals and the constructors it knows.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from ._callee import Resolver
from ._flow import uses_of_def
from ._literals import UNKNOWN
from ._module import ASSIGN, IMPORT, Binding, FunctionInfo, ModuleInfo, Scope
from ._names import PARTITION_SPEC, qualname
from ._shapes import (
    DEVICES,
    GENERATOR,
    Array,
    Mesh,
    Spec,
    arithmetic,
    attribute,
    construct,
    make_mesh,
    method,
    partition_spec,
)

MAX_DEPTH = 24
# The longest list a comprehension is read as: its items are unknown one by one, and each is
# a leaf the checks walk, so a longer one (a pytree longer than any in real code) is UNKNOWN.
MAX_ITEMS = 1_000
_NOT_KEPT = object()  # no value kept for a name at the depth it is read at

# Operators that act elementwise on arrays (with NumPy broadcasting); `@` is not one.
_ELEMENTWISE = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)

# Calls that read their arguments without changing them: a list or dict passed to them
# stays as it was (JAX and axischeck never mutate a Python container they are given).
_READER_LIBS = ("jax.", "axischeck.")
_READERS = frozenset({"functools.partial"})
_BUILTIN_READERS = frozenset({"len", "print", "tuple", "list", "dict", "repr", "str", "sorted", "isinstance"})


class Values:
    """The interpreter for one project (files under the linted paths)."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        # A name's value and its height (how many levels below the name reading it went): a
        # read at any depth where that height still fits under MAX_DEPTH gives the same value.
        self._names: dict[tuple[int, str], tuple[Any, int]] = {}
        # A name's value cut short by MAX_DEPTH, by the depth it was read at: a shallower read
        # may see all of it, a deeper one sees less.
        self._cut: dict[tuple[tuple[int, str], int], Any] = {}
        self._deepest = 0  # the deepest level the reading under way reached (past MAX_DEPTH: cut short)
        self._active: set[tuple[int, str]] = set()
        self._holders: set[tuple[int, str]] = set()  # containers being checked for what holds them
        self._sources: dict[tuple[int, str], list[tuple[ast.expr, ModuleInfo]] | None] = {}
        # How each kind of expression is read; any other expression is UNKNOWN.
        self._readers: dict[type, Callable[[Any, ModuleInfo, int], Any]] = {
            ast.Constant: self._constant,
            ast.UnaryOp: self._unary,
            ast.Tuple: self._sequence,
            ast.List: self._sequence,
            ast.Dict: self._dict,
            ast.BinOp: self._binary,
            ast.ListComp: self._comprehension,
            ast.Name: self.name,
            ast.Call: self._call,
            ast.Attribute: self._attribute,
        }

    def clear(self) -> None:
        """Forget every value read (they point into syntax trees the run is done with)."""
        for cache in (self._names, self._cut, self._active, self._holders, self._sources):
            cache.clear()

    def of(self, node: ast.expr | None, module: ModuleInfo, depth: int = 0) -> Any:
        """The value of `node` (read in `module`), UNKNOWN where it is not certain."""
        if node is None:
            return UNKNOWN
        if depth > self._deepest:
            self._deepest = depth
        if depth > MAX_DEPTH:
            return UNKNOWN
        read = self._readers.get(node.__class__)
        return UNKNOWN if read is None else read(node, module, depth)

    def _constant(self, node: ast.Constant, module: ModuleInfo, depth: int) -> Any:
        return node.value

    def _unary(self, node: ast.UnaryOp, module: ModuleInfo, depth: int) -> Any:
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            return UNKNOWN
        inner = self.of(node.operand, module, depth + 1)
        if type(inner) in (int, float, complex):
            return -inner if isinstance(node.op, ast.USub) else +inner
        return UNKNOWN

    def _sequence(self, node: ast.Tuple | ast.List, module: ModuleInfo, depth: int) -> Any:
        if not module.spelled_out(node):
            return UNKNOWN
        items = [self.of(e, module, depth + 1) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items

    def _binary(self, node: ast.BinOp, module: ModuleInfo, depth: int) -> Any:
        if not isinstance(node.op, _ELEMENTWISE):
            return UNKNOWN
        left, right = self.of(node.left, module, depth + 1), self.of(node.right, module, depth + 1)
        if isinstance(node.op, ast.Add) and type(left) is type(right) and isinstance(left, (tuple, list)):
            return left + right  # a new tuple or list: the items, one after the other
        return arithmetic(left, right)

    def _attribute(self, node: ast.Attribute, module: ModuleInfo, depth: int) -> Any:
        return attribute(self.of(node.value, module, depth + 1), node.attr)

    def _comprehension(self, node: ast.ListComp, module: ModuleInfo, depth: int) -> Any:
        """`[expr for n in range(a, b)]`: a list of len(range(a, b)) items, up to MAX_ITEMS.
        The items themselves are not read (they depend on `n`): each is UNKNOWN."""
        if len(node.generators) != 1:
            return UNKNOWN
        gen = node.generators[0]
        it = gen.iter
        if gen.ifs or gen.is_async or not isinstance(it, ast.Call) or not isinstance(it.func, ast.Name):
            return UNKNOWN
        scope = module.scope_of.get(it)
        if it.func.id != "range" or scope is None or module.lookup("range", scope) is not None or it.keywords:
            return UNKNOWN  # `range` rebound: not the builtin
        bounds = [self.of(a, module, depth + 1) for a in it.args]
        if not 1 <= len(bounds) <= 3 or not all(type(b) is int for b in bounds) or (len(bounds) == 3 and not bounds[2]):
            return UNKNOWN
        length = len(range(*bounds))
        return [UNKNOWN] * length if length <= MAX_ITEMS else UNKNOWN

    def _dict(self, node: ast.Dict, module: ModuleInfo, depth: int) -> Any:
        if any(k is None for k in node.keys):  # {**other}
            return UNKNOWN
        keys = [self.of(k, module, depth + 1) for k in node.keys]
        if not all(isinstance(k, (str, int)) and type(k) is not bool for k in keys) or len(set(keys)) != len(keys):
            return UNKNOWN
        return {k: self.of(v, module, depth + 1) for k, v in zip(keys, node.values, strict=True)}

    # ------------------------------------------------------------------ names

    def name(self, node: ast.Name, module: ModuleInfo, depth: int = 0) -> Any:
        scope = module.scope_of.get(node)
        if scope is None:
            return UNKNOWN
        owner = module.owner(node.id, scope)
        if owner is None:
            return UNKNOWN  # a builtin or a star import
        key = (id(owner), node.id)
        kept = self._kept(key, depth)
        if kept is not _NOT_KEPT:
            return kept
        if key in self._active:
            return UNKNOWN  # `x = f(x)` and other cycles
        self._active.add(key)
        outer, self._deepest = self._deepest, depth
        try:
            value = self._binding(owner.bindings[node.id], node.id, owner, module, depth)
        finally:
            self._active.discard(key)
            reached, self._deepest = self._deepest, max(outer, self._deepest)
        if reached > MAX_DEPTH:
            self._cut[key, depth] = value
        else:
            self._names[key] = (value, reached - depth)
        return value

    def _kept(self, key: tuple[int, str], depth: int) -> Any:
        """The value kept for name `key` when reading it again at `depth` would give the same
        one, else _NOT_KEPT: a value MAX_DEPTH cut no part of holds wherever its height fits
        under the limit, one it cut holds only at the depth it was read at (a deeper read sees
        less of it). Marks the levels that reading would reach as reached."""
        kept = self._names.get(key)
        if kept is not None and depth + kept[1] <= MAX_DEPTH:
            self._deepest = max(self._deepest, depth + kept[1])
            return kept[0]
        if (key, depth) in self._cut:
            self._deepest = max(self._deepest, MAX_DEPTH + 1)
            return self._cut[key, depth]
        return _NOT_KEPT

    def _binding(self, bindings: list[Binding], name: str, owner: Scope, module: ModuleInfo, depth: int) -> Any:
        if owner.kind == "class":
            return UNKNOWN  # read as self.name, which an instance may override
        if all(b.kind == IMPORT for b in bindings) and len({b.value for b in bindings}) == 1:
            return self._imported(str(bindings[0].value), module, depth)
        if len(bindings) != 1:
            return UNKNOWN
        b = bindings[0]
        if b.kind == ASSIGN and isinstance(b.value, ast.expr):
            value = self.of(b.value, module, depth + 1)
            if _containers(value) and not self._only_read(module, name, owner):
                return UNKNOWN
            if _arrays(value) and not self._shape_kept(module, name, owner):
                return UNKNOWN
            return value
        if isinstance(b.node, ast.arg) and owner.function is not None:
            return self._parameter(owner.function, name, depth)
        return UNKNOWN

    def _imported(self, dotted: str, module: ModuleInfo, depth: int) -> Any:
        """A constant of another linted file (`from .config import AXES`)."""
        rest = dotted.lstrip(".")
        dots = dotted[: len(dotted) - len(rest)]
        head, _, attr = rest.rpartition(".")
        if not attr or not (dots or head):
            return UNKNOWN
        other = self.resolver.find_module(dots + head, module)
        if other is None or other is module or attr not in other.scope.bindings:
            return UNKNOWN
        if attr in module.stored_attrs or attr in other.stored_attrs:
            return UNKNOWN  # `config.AXES = ...` somewhere: the module attribute is set from outside
        bindings = other.scope.bindings[attr]
        if len(bindings) != 1 or bindings[0].kind != ASSIGN or not isinstance(bindings[0].value, ast.expr):
            return UNKNOWN
        value = self.of(bindings[0].value, other, depth + 1)
        if _containers(value) or _arrays(value):
            return UNKNOWN  # another module may change it: its reads are not all here
        return value

    def _only_read(self, module: ModuleInfo, name: str, owner: Scope) -> bool:
        """Every read of `name` leaves the object as it is: it is passed to a known reader
        (a transform, a constructor, `len`) or indexed, never a method's receiver or a
        target, never handed to code that could change it."""
        for load in module.reads(name, owner):
            parent = module.parents.get(load)
            if isinstance(parent, (ast.List, ast.Tuple, ast.BinOp)):
                target = _stored_in_a_name(module, load)
                holder = module.owner(target.id, module.scope_of.get(target) or owner) if target else None
                if target is not None and holder is not None and self._only_read_once(module, target.id, holder):
                    continue  # `X = [Y, Y + [0]]`: Y is reachable only through X, which is only read
                return False
            if isinstance(parent, ast.keyword):
                parent = module.parents.get(parent)
            if isinstance(parent, ast.Subscript) and parent.value is load and isinstance(parent.ctx, ast.Load):
                grand = module.parents.get(parent)
                if not isinstance(grand, (ast.Attribute, ast.Subscript)):
                    continue
                return False
            if isinstance(parent, ast.Call) and parent.func is not load:
                scope = module.scope_of[parent]
                called = qualname(parent.func, module, scope)
                if called is not None and (called.startswith(_READER_LIBS) or called in _READERS):
                    continue
                if (
                    isinstance(parent.func, ast.Name)
                    and parent.func.id in _BUILTIN_READERS
                    and module.lookup(parent.func.id, scope) is None
                ):
                    continue
                if isinstance(parent.func, ast.Call) and self.resolver.match(
                    parent.func, module, module.scope_of[parent]
                ):
                    continue  # jax.vmap(f, ...)(IN): an argument of a transformed call
            return False
        return True

    def _only_read_once(self, module: ModuleInfo, name: str, owner: Scope) -> bool:
        """`name` is bound once (by the assignment that holds the container) and only read."""
        key = (id(owner), name)
        if key in self._holders or len(owner.bindings.get(name, ())) != 1:
            return False
        self._holders.add(key)
        try:
            return self._only_read(module, name, owner)
        finally:
            self._holders.discard(key)

    def _shape_kept(self, module: ModuleInfo, name: str, owner: Scope) -> bool:
        """No read of `name` resizes the array in place (`a.resize(...)`, `a.shape = ...`:
        NumPy's arrays allow both; every other operation leaves the shape as it was)."""
        if "shape" in module.stored_attrs:
            return False
        for load in module.reads(name, owner):
            parent = module.parents.get(load)
            if isinstance(parent, ast.Attribute) and parent.attr == "resize":
                return False
        return True

    def _parameter(self, fn: FunctionInfo, name: str, depth: int) -> Any:
        """A parameter's value when every visible call of `fn` gives it the same one (its
        default where a call leaves it out). What other files pass is not seen, but a
        finding made with this value holds for each call seen here."""
        sources = self.parameter_sources(fn, name)
        if not sources:
            return UNKNOWN
        seen: Any = UNKNOWN
        for i, (expr, module) in enumerate(sources):
            value = self.of(expr, module, depth + 1)
            if value is UNKNOWN or (i and repr(value) != repr(seen)):  # 1 and True differ as axes
                return UNKNOWN
            seen = value
        return seen

    def parameter_sources(self, fn: FunctionInfo, name: str) -> list[tuple[ast.expr, ModuleInfo]] | None:
        """What each visible call of `fn` gives parameter `name`: the argument, or the default
        where the call leaves it out. None when a call cannot be read (`*args`, a partial, a
        method) or `fn` is not called in its file."""
        key = (id(fn), name)
        if key not in self._sources:
            self._sources[key] = self._parameter_sources(fn, name)
        return self._sources[key]

    def _parameter_sources(self, fn: FunctionInfo, name: str) -> list[tuple[ast.expr, ModuleInfo]] | None:
        node = fn.node
        a = node.args
        positional = [*a.posonlyargs, *a.args]
        default: ast.expr | None = None
        index = -1
        for i, p in enumerate(positional):
            if p.arg == name:
                index = i
                first_default = len(positional) - len(a.defaults)
                default = a.defaults[i - first_default] if i >= first_default else None
        for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
            if p.arg == name:
                default = d
        if isinstance(node, ast.Lambda) or fn.cls is not None or (index < 0 and default is None):
            return None
        uses = uses_of_def(self.resolver, fn)
        if not uses:
            return None  # called from elsewhere, if at all
        sources: list[tuple[ast.expr, ModuleInfo]] = []
        for use in uses:
            call = use.node
            if use.kind != "call" or not isinstance(call, ast.Call) or use.implicit or use.bound:
                return None
            if not use.module.spelled_out(call):
                return None
            given = [k.value for k in call.keywords if k.arg == name]
            if 0 <= index < len(call.args):
                given.append(call.args[index])
            if len(given) > 1:
                return None  # passed twice: a TypeError
            if given:
                sources.append((given[0], use.module))
            elif default is not None:
                sources.append((default, fn.module))
            else:
                return None  # a required parameter left out: a TypeError
        return sources

    # ------------------------------------------------------------------ calls

    def _call(self, node: ast.Call, module: ModuleInfo, depth: int) -> Any:
        if not module.spelled_out(node):
            return UNKNOWN
        func = node.func
        scope = module.scope_of.get(node)
        name = qualname(func, module, scope) if scope is not None else None
        if name is None and isinstance(func, ast.Attribute):
            base = self.of(func.value, module, depth + 1)
            if isinstance(base, Array) or base is GENERATOR:
                args, kwargs = self._arguments(node, module, depth)
                return method(base, func.attr, args, kwargs)
            return UNKNOWN
        if name is None:
            return UNKNOWN
        if name in PARTITION_SPEC:
            args, kwargs = self._arguments(node, module, depth)
            return partition_spec(args, kwargs)
        if name == "jax.make_mesh":
            args, kwargs = self._arguments(node, module, depth)
            return make_mesh(args, kwargs)
        if name.startswith(("jax.", "numpy.")):
            args, kwargs = self._arguments(node, module, depth)
            return construct(name, args, kwargs)
        return UNKNOWN

    def _arguments(self, node: ast.Call, module: ModuleInfo, depth: int) -> tuple[list[Any], dict[str, Any]]:
        args = [self.of(a, module, depth + 1) for a in node.args]
        kwargs = {k.arg: self.of(k.value, module, depth + 1) for k in node.keywords if k.arg is not None}
        return args, kwargs


def _stored_in_a_name(module: ModuleInfo, load: ast.Name) -> ast.Name | None:
    """The name `load` is stored in when it is an item of a list or tuple literal, or an
    operand of `+`, all the way up to an assignment to one name (`X = [Y, Y + [0]]`)."""
    child: ast.AST = load
    parent = module.parents.get(load)
    while isinstance(parent, (ast.List, ast.Tuple, ast.BinOp)):
        if isinstance(parent, ast.BinOp) and not isinstance(parent.op, ast.Add):
            return None
        if isinstance(parent, (ast.List, ast.Tuple)) and not isinstance(parent.ctx, ast.Load):
            return None
        child, parent = parent, module.parents.get(parent)
    if isinstance(parent, ast.Assign) and parent.value is child and len(parent.targets) == 1:
        target = parent.targets[0]
        return target if isinstance(target, ast.Name) else None
    return None


def _containers(value: Any) -> bool:
    """The value holds a list or a dict, which code could change in place."""
    if isinstance(value, (list, dict)):
        return True
    if isinstance(value, tuple):
        return any(_containers(v) for v in value)
    return False


def _arrays(value: Any) -> bool:
    """The value holds an array (a NumPy array's shape can be changed in place)."""
    if isinstance(value, Array):
        return True
    if isinstance(value, (tuple, list)):
        return any(_arrays(v) for v in value)
    if isinstance(value, dict):
        return any(_arrays(v) for v in value.values())
    return False


_PLAIN = frozenset({int, str, float, bool, type(None)})  # option values as they are written


def as_option(value: Any) -> Any:
    """A value as a transform option (`in_axes`, `axis_name`): arrays and symbols are not
    options the checks can read, so they become UNKNOWN."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, tuple):
        return tuple(as_option(v) for v in value)
    if isinstance(value, list):
        return [as_option(v) for v in value]
    if isinstance(value, dict):
        return {k: as_option(v) for k, v in value.items()}
    if isinstance(value, (Array, Mesh, Spec)) or value is DEVICES or value is GENERATOR:
        return UNKNOWN
    return value

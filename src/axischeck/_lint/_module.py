"""One Python file as the linter sees it: its syntax tree, scopes, bindings and functions.

Built in one pass over the tree. Name resolution follows Python's scoping rules closely
enough to be *sure* of an answer or to give none: a name bound more than once in a scope
(two `def`s, a `def` and an assignment, a loop variable, `global`) resolves to nothing,
so every later check that depends on it stays silent.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ._literals import literal

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
_Comprehension = ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
ScopeKind = Literal["module", "function", "class"]

# Binding kinds. IMPORT carries the imported dotted name ("jax.vmap", "..pkg.f" for a
# relative import), DEF a FunctionInfo, CLASS a ClassInfo, ASSIGN the assigned
# expression (single-target `name = value` only); OTHER is any other binding.
IMPORT, DEF, CLASS, ASSIGN, OTHER = range(5)


@dataclass(eq=False, slots=True)
class Binding:
    kind: int
    node: ast.AST
    value: object = None  # str for IMPORT, FunctionInfo for DEF, ClassInfo for CLASS, ast.expr for ASSIGN
    scope: Scope | None = None


@dataclass(eq=False, slots=True)
class Scope:
    kind: ScopeKind
    node: ast.AST
    parent: Scope | None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    function: FunctionInfo | None = None  # for function scopes
    cls: ClassInfo | None = None  # for class scopes
    # Answers already found for names read here (a name read in a scope always means the
    # same: the bindings are fixed once the module is built).
    owners: dict[str, Scope | None] = field(default_factory=dict)  # name -> the scope that binds it
    qualnames: dict[str, str | None] = field(default_factory=dict)  # name -> the dotted name imported

    def bind(self, name: str, kind: int, node: ast.AST, value: object = None) -> None:
        self.bindings.setdefault(name, []).append(Binding(kind, node, value, self))


@dataclass(eq=False, slots=True)
class Params:
    """A function's parameters as a caller sees them."""

    positional: tuple[str, ...]  # positional-only and positional-or-keyword, in order
    posonly: int  # how many of `positional` are positional-only
    required: int  # how many of `positional` have no default
    varargs: str | None
    kwonly: tuple[str, ...]
    varkw: str | None
    annotations: dict[str, ast.expr]  # parameter name (and "return") -> annotation

    @classmethod
    def of(cls, node: FunctionNode) -> Params:
        a = node.args
        positional = tuple(p.arg for p in (*a.posonlyargs, *a.args))
        notes: dict[str, ast.expr] = {}
        if not isinstance(node, ast.Lambda):
            for p in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                if p.annotation is not None:
                    notes[p.arg] = p.annotation
            if node.returns is not None:
                notes["return"] = node.returns
        return cls(
            positional=positional,
            posonly=len(a.posonlyargs),
            required=len(positional) - len(a.defaults),
            varargs=a.vararg.arg if a.vararg else None,
            kwonly=tuple(p.arg for p in a.kwonlyargs),
            varkw=a.kwarg.arg if a.kwarg else None,
            annotations=notes,
        )


@dataclass(eq=False, slots=True)
class FunctionInfo:
    node: FunctionNode
    name: str
    module: ModuleInfo
    outer: Scope  # where it is defined
    scope: Scope  # its own body
    cls: ClassInfo | None = None  # defined directly in this class's body
    _params: Params | None = None
    _returns: tuple[ast.expr, ...] | None | bool = False  # False: not read yet
    _first_exit: tuple[int, int] | None | bool = False  # False: not read yet

    @property
    def params(self) -> Params:
        if self._params is None:
            self._params = Params.of(self.node)
        return self._params

    @property
    def returns(self) -> tuple[ast.expr, ...] | None:
        """Every expression the function returns, when each run ends at one of them (it
        cannot fall off its end, and it is no generator or coroutine); None otherwise."""
        if self._returns is False:
            self._returns = _returned(self.node)
        assert self._returns is not True
        return self._returns

    def exits_before(self, here: tuple[int, int]) -> bool:
        """A `return` or `raise` of the function's own code (not of a nested def or class)
        ends at or before position `here` (line, column)."""
        if self._first_exit is False:
            self._first_exit = _first_exit(self.node)
        assert self._first_exit is not True
        return self._first_exit is not None and self._first_exit <= here

    @property
    def decorators(self) -> list[ast.expr]:
        return [] if isinstance(self.node, ast.Lambda) else self.node.decorator_list

    @property
    def qualname(self) -> str:
        return f"{self.cls.name}.{self.name}" if self.cls is not None else self.name


@dataclass(eq=False, slots=True)
class ClassInfo:
    node: ast.ClassDef
    name: str
    scope: Scope
    methods: dict[str, list[FunctionInfo]] = field(default_factory=dict)


@dataclass(eq=False, slots=True)
class ModuleInfo:
    """A parsed file and everything the checks look up in it."""

    path: str
    source: str
    tree: ast.Module
    parts: tuple[str, ...]  # path components without the suffix ("pkg", "mod"), for imports
    is_package: bool  # an __init__.py
    scope: Scope
    parents: dict[ast.AST, ast.AST]
    scope_of: dict[ast.AST, Scope]  # each Call, Name, Lambda and def -> the scope it is evaluated in
    functions: list[FunctionInfo]
    function_of: dict[ast.AST, FunctionInfo]  # def / Lambda node -> its FunctionInfo
    calls: dict[str, list[ast.Call]]  # every call, by the name it calls (`f`, `x.f`; "" for others)
    loads: dict[str, list[ast.Name]]  # every Name read, by identifier
    imports_modules: set[str]  # dotted names imported anywhere (for cross-file uses)
    stored_attrs: set[str]  # attribute names assigned anywhere (`self.f = ...`)
    attr_loads: dict[str, list[ast.Attribute]]  # every `x.name` read, by name
    column_shift: dict[int, int] = field(default_factory=dict)  # Markdown: characters cut per line
    # A notebook: a module line's (cell number, line in the cell).
    cell_place: Callable[[int], tuple[int, int]] | None = None
    # Names bound somewhere by an import or assigned a name or an attribute (`vm = jax.vmap`):
    # the only bare names `qualname` follows to an imported function.
    aliases: set[str] = field(default_factory=set)
    # Reads an option's value (names and constants followed); the project's interpreter
    # sets it. Without one, only literals are read.
    reader: Callable[[ast.expr, ModuleInfo], Any] | None = None
    classes: list[ClassInfo] = field(default_factory=list)  # every class the file defines
    # Calls with a `*args` or `**kwargs`, and tuple or list displays with a `*items`.
    unpacking: set[ast.AST] = field(default_factory=set)
    _lines: list[str] | None = None  # the source's lines, split at the first finding
    # The reads of a name grouped by the scope they resolve to, per name asked (see `reads`).
    _reads: dict[str, dict[Scope | None, tuple[ast.Name, ...]]] = field(default_factory=dict)
    # The calls of each set of names asked (see `calls_of`): every site of a file asks.
    _calls_of: dict[frozenset[str], tuple[ast.Call, ...]] = field(default_factory=dict)

    def line(self, number: int) -> str:
        """The text of line `number` (1-based; "" past the end)."""
        if self._lines is None:
            self._lines = self.source.splitlines()
        return self._lines[number - 1] if 0 < number <= len(self._lines) else ""

    def spelled_out(self, node: ast.Call | ast.Tuple | ast.List) -> bool:
        """Every argument of a call (item of a tuple or list) is where it is written: no
        `*args`, no `**kwargs`."""
        return node not in self.unpacking

    def release(self) -> None:
        """Drop the links that make cycles (a scope and its bindings, a function and its
        scope, a class and its methods, the module and its functions), so that this module
        and its syntax tree are freed as soon as the run lets go of them, by reference
        counting: the cyclic collector never walks the tree's many nodes."""
        scopes = [self.scope, *(f.scope for f in self.functions), *(c.scope for c in self.classes)]
        for scope in scopes:
            scope.bindings.clear()
            scope.function = None
            scope.cls = None
            scope.owners.clear()
            scope.qualnames.clear()
        for cls in self.classes:
            cls.methods.clear()
        self.functions.clear()
        self.classes.clear()
        self.function_of.clear()
        self._reads.clear()
        self._calls_of.clear()
        self.reader = None

    def calls_of(self, names: frozenset[str]) -> tuple[ast.Call, ...]:
        """The calls that may call one of `names`, in source order: `x.name(...)`, and every
        call of a bare name that an import or assignment may make one of them (`vm(...)`
        after `from jax import vmap as vm`). Found once per set of names."""
        known = self._calls_of.get(names)
        if known is None:
            found = [
                call
                for called, calls in self.calls.items()
                if called in names or called in self.aliases
                for call in calls
            ]
            found.sort(key=_POSITION)
            known = self._calls_of[names] = tuple(found)
        return known

    def reads(self, name: str, owner: Scope) -> tuple[ast.Name, ...]:
        """Every read of `name` that resolves to the bindings of scope `owner` (in the order
        of `loads`). The reads of a name are grouped by scope once, at the first question: a
        name such as `x`, bound in many functions, is asked about once per function."""
        if name not in self._reads:
            by_owner: dict[Scope | None, list[ast.Name]] = {}
            for load in self.loads.get(name, ()):
                by_owner.setdefault(self.owner(name, self.scope_of[load]), []).append(load)
            self._reads[name] = {scope: tuple(loads) for scope, loads in by_owner.items()}
        return self._reads[name].get(owner, ())

    def value(self, node: ast.expr | None) -> Any:
        """The value of an option expression: literals, and what the interpreter knows."""
        if node is None or self.reader is None:
            return literal(node)
        return self.reader(node, self)

    def lookup(self, name: str, scope: Scope) -> list[Binding] | None:
        """The bindings `name` refers to when read in `scope`, or None (builtin, star import)."""
        owner = self.owner(name, scope)
        return None if owner is None else owner.bindings[name]

    def owner(self, name: str, scope: Scope) -> Scope | None:
        if name in scope.owners:
            return scope.owners[name]
        s: Scope | None = scope
        found: Scope | None = None
        first = True
        while s is not None:
            # A class body's names are visible in the body itself, not in its methods.
            if (s.kind != "class" or first) and name in s.bindings:
                found = s
                break
            first = False
            s = s.parent
        scope.owners[name] = found
        return found


# Fields that never hold a node the builder needs: the load/store context, operators
# (`ast.Add()` and friends are shared singletons with nothing below them), and names,
# flags and numbers (`Name.id`, `Attribute.attr`, `keyword.arg`, `ImportFrom.level`, ...).
_SKIPPED_FIELDS = frozenset(
    ["ctx", "op", "ops", "id", "attr", "arg", "name", "asname", "module", "level", "is_async", "kind"]
    + ["conversion", "simple", "type_comment", "tag", "kwd_attrs", "rest"]
)
# Node class -> its fields that may hold nodes, for every node class of `ast`.
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {
    kind: tuple(f for f in kind._fields if f not in _SKIPPED_FIELDS)
    for kind in vars(ast).values()
    if isinstance(kind, type) and issubclass(kind, ast.AST)
}


class _Builder:
    """The single pass that fills a ModuleInfo."""

    def __init__(self, info: ModuleInfo) -> None:
        self.info = info
        self.parents, self.scope_of, self.loads = info.parents, info.scope_of, info.loads

    def run(self) -> None:
        self.visit_each(self.info.tree.body, self.info.tree, self.info.scope)

    def visit_body(self, node: ast.AST, scope: Scope) -> None:
        # ast.iter_child_nodes, without the fields that hold no node.
        visit = self.visit
        for name in _CHILD_FIELDS[node.__class__]:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        visit(item, node, scope)
            elif isinstance(value, ast.AST):
                visit(value, node, scope)

    def visit(self, node: ast.AST, parent: ast.AST, scope: Scope) -> None:
        self.parents[node] = parent
        _HANDLERS[node.__class__](self, node, parent, scope)

    def visit_each(self, nodes: list[Any], parent: ast.AST, scope: Scope) -> None:
        """`visit` for each node of a list of children (statements, arguments, items)."""
        parents = self.parents
        for node in nodes:
            parents[node] = parent
            _HANDLERS[node.__class__](self, node, parent, scope)

    def visit_children(self, node: ast.AST, parent: ast.AST, scope: Scope) -> None:
        """A node the builder only walks through."""
        self.visit_body(node, scope)

    # The most frequent nodes that hold nodes, with their children named: read directly
    # rather than through the table of fields.

    def visit_value(self, node: ast.Expr | ast.Return, parent: ast.AST, scope: Scope) -> None:
        if node.value is not None:
            self.visit(node.value, node, scope)

    def visit_elements(self, node: ast.Tuple | ast.List, parent: ast.AST, scope: Scope) -> None:
        self.visit_each(node.elts, node, scope)

    def visit_operands(self, node: ast.BinOp, parent: ast.AST, scope: Scope) -> None:
        """A sum of many terms (generated code) nests its operations hundreds deep on the
        left: walked down that spine without recursion, the operands in source order."""
        spine = [node]
        left = node.left
        while isinstance(left, ast.BinOp):
            self.parents[left] = spine[-1]
            spine.append(left)
            left = left.left
        self.visit(left, spine[-1], scope)
        for operation in reversed(spine):
            self.visit(operation.right, operation, scope)

    def visit_if(self, node: ast.If, parent: ast.AST, scope: Scope) -> None:
        """An `elif` chain nests each `if` in the `else` of the one before, hundreds deep in
        generated dispatch code: walked along the chain without recursion."""
        while True:
            self.visit(node.test, node, scope)
            self.visit_each(node.body, node, scope)
            elif_ = node.orelse[0] if len(node.orelse) == 1 else None
            if not isinstance(elif_, ast.If):
                self.visit_each(node.orelse, node, scope)
                return
            self.parents[elif_] = node
            node = elif_

    def visit_name(self, node: ast.Name, parent: ast.AST, scope: Scope) -> None:
        if isinstance(node.ctx, ast.Load):
            self.loads.setdefault(node.id, []).append(node)
            if scope.kind == "class" and node.id not in scope.bindings:
                # A class body reads a name it has not bound yet from the scopes around
                # the class (`IN = IN` copies the module's IN).
                scope = _past_classes(scope)
            self.scope_of[node] = scope
        else:
            scope.bind(node.id, OTHER, node)  # refined for plain assignments below

    def visit_comprehension(self, node: _Comprehension, parent: ast.AST, scope: Scope) -> None:
        """A comprehension in a class body runs in a scope of its own, which does not see
        the class's names: all but its first iterable are read past the class."""
        if scope.kind != "class":
            self.visit_body(node, scope)
            return
        first, *rest = node.generators
        outer = _past_classes(scope)
        self.parents[first] = node
        self.visit(first.iter, first, scope)
        self.visit(first.target, first, outer)
        self.visit_each(first.ifs, first, outer)
        self.visit_each(rest, node, outer)
        for part in (node.elt,) if not isinstance(node, ast.DictComp) else (node.key, node.value):
            self.visit(part, node, outer)

    def visit_call(self, node: ast.Call, parent: ast.AST, scope: Scope) -> None:
        info = self.info
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        info.calls.setdefault(called, []).append(node)
        self.scope_of[node] = scope
        self.visit(func, node, scope)
        self.visit_each(node.args, node, scope)
        if node.keywords:
            self.visit_each(node.keywords, node, scope)

    def visit_attribute(self, node: ast.Attribute, parent: ast.AST, scope: Scope) -> None:
        info = self.info
        if isinstance(node.ctx, ast.Load):
            info.attr_loads.setdefault(node.attr, []).append(node)
        else:
            info.stored_attrs.add(node.attr)
        self.visit(node.value, node, scope)

    def visit_global(self, node: ast.Global | ast.Nonlocal, parent: ast.AST, scope: Scope) -> None:
        for name in node.names:  # assigned from elsewhere: never sure what it holds
            scope.bind(name, OTHER, node)
            target = self.info.scope if isinstance(node, ast.Global) else scope.parent
            if target is not None:
                target.bind(name, OTHER, node)

    def visit_named(self, node: ast.ExceptHandler | ast.MatchAs | ast.MatchStar, parent: ast.AST, scope: Scope) -> None:
        if node.name:
            scope.bind(node.name, OTHER, node)
        self.visit_body(node, scope)

    def visit_match_mapping(self, node: ast.MatchMapping, parent: ast.AST, scope: Scope) -> None:
        if node.rest:
            scope.bind(node.rest, OTHER, node)
        self.visit_body(node, scope)

    def visit_function(self, node: FunctionNode, parent: ast.AST, scope: Scope) -> None:
        info = self.info
        info.scope_of[node] = scope
        a = node.args
        self.visit_each(a.defaults, a, scope)
        for d in a.kw_defaults:
            if d is not None:
                self.visit(d, a, scope)
        own = Scope("function", node, scope)
        cls = scope.cls if scope.kind == "class" else None
        name = "<lambda>" if isinstance(node, ast.Lambda) else node.name
        fn = FunctionInfo(node, name, info, scope, own, cls)
        own.function = fn
        info.functions.append(fn)
        info.function_of[node] = fn
        for params in (a.posonlyargs, a.args, a.kwonlyargs, (a.vararg, a.kwarg)):
            for p in params:
                if p is not None:
                    own.bind(p.arg, OTHER, p)
                    if p.annotation is not None:
                        self.visit(p.annotation, p, scope)
        if isinstance(node, ast.Lambda):
            self.visit(node.body, node, own)
            return
        for dec in node.decorator_list:
            self.visit(dec, node, scope)
        if node.returns is not None:
            self.visit(node.returns, node, scope)
        scope.bind(node.name, DEF, node, fn)
        if cls is not None:
            cls.methods.setdefault(node.name, []).append(fn)
        self.visit_each(node.body, node, own)

    def visit_class(self, node: ast.ClassDef, parent: ast.AST, scope: Scope) -> None:
        info = self.info
        info.scope_of[node] = scope
        for e in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
            self.visit(e, node, scope)
        own = Scope("class", node, scope)
        own.cls = ClassInfo(node, node.name, own)
        info.classes.append(own.cls)
        scope.bind(node.name, CLASS, node, own.cls)
        self.visit_each(node.body, node, own)

    def visit_import(self, node: ast.Import | ast.ImportFrom, parent: ast.AST, scope: Scope) -> None:
        info = self.info
        if isinstance(node, ast.Import):
            for alias in node.names:
                info.imports_modules.add(alias.name)
                if alias.asname:
                    scope.bind(alias.asname, IMPORT, node, alias.name)
                    info.aliases.add(alias.asname)
                else:
                    head = alias.name.split(".")[0]
                    scope.bind(head, IMPORT, node, head)
                    info.aliases.add(head)
            return
        base = "." * node.level + (node.module or "")
        info.imports_modules.add(base)
        for alias in node.names:
            if alias.name == "*":
                continue
            full = f"{base}.{alias.name}" if not base.endswith(".") else f"{base}{alias.name}"
            info.imports_modules.add(full)
            scope.bind(alias.asname or alias.name, IMPORT, node, full)
            info.aliases.add(alias.asname or alias.name)

    def visit_unpacking(self, node: ast.Starred | ast.keyword, parent: ast.AST, scope: Scope) -> None:
        """`*args` in a call or a display, `**kwargs` in a call (a keyword without a name):
        the call or display unpacks."""
        if isinstance(node, ast.Starred) or node.arg is None:
            self.info.unpacking.add(parent)
        self.visit(node.value, node, scope)

    def visit_leaf(self, node: ast.AST, parent: ast.AST, scope: Scope) -> None:
        """A constant: nothing below it."""

    def visit_assign(self, node: ast.Assign | ast.AnnAssign, parent: ast.AST, scope: Scope) -> None:
        info = self.info
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if node.value is not None:
            self.visit(node.value, node, scope)
        if isinstance(node, ast.AnnAssign):
            self.visit(node.annotation, node, scope)
        for t in targets:
            if isinstance(t, ast.Name) and node.value is not None:
                info.parents[t] = node
                scope.bind(t.id, ASSIGN, node, node.value)
                if isinstance(node.value, (ast.Name, ast.Attribute)):
                    info.aliases.add(t.id)
            else:
                self.visit(t, node, scope)


# What the builder does per node class; every other node is only walked through. (A table
# of the class's functions, not of bound methods: a builder holds no cycle that would keep
# it, and the module it fills, alive after the pass.)
_HANDLERS: dict[type, Callable[[_Builder, Any, ast.AST, Scope], None]] = {
    **dict.fromkeys(_CHILD_FIELDS, _Builder.visit_children),
    ast.Expr: _Builder.visit_value,
    ast.Return: _Builder.visit_value,
    ast.Tuple: _Builder.visit_elements,
    ast.List: _Builder.visit_elements,
    ast.BinOp: _Builder.visit_operands,
    ast.If: _Builder.visit_if,
    ast.Name: _Builder.visit_name,
    ast.Call: _Builder.visit_call,
    ast.Attribute: _Builder.visit_attribute,
    ast.FunctionDef: _Builder.visit_function,
    ast.AsyncFunctionDef: _Builder.visit_function,
    ast.Lambda: _Builder.visit_function,
    ast.ClassDef: _Builder.visit_class,
    ast.Import: _Builder.visit_import,
    ast.ImportFrom: _Builder.visit_import,
    ast.Assign: _Builder.visit_assign,
    ast.AnnAssign: _Builder.visit_assign,
    ast.Global: _Builder.visit_global,
    ast.Nonlocal: _Builder.visit_global,
    ast.ExceptHandler: _Builder.visit_named,
    ast.MatchAs: _Builder.visit_named,
    ast.MatchStar: _Builder.visit_named,
    ast.MatchMapping: _Builder.visit_match_mapping,
    ast.Starred: _Builder.visit_unpacking,
    ast.keyword: _Builder.visit_unpacking,
    ast.Constant: _Builder.visit_leaf,
    **dict.fromkeys(_Comprehension.__args__, _Builder.visit_comprehension),
}


def _past_classes(scope: Scope) -> Scope:
    """The nearest scope around `scope` that is not a class body: where a class body's
    read of a name it has not bound, and whatever is nested in a class body, look next."""
    while scope.kind == "class" and scope.parent is not None:
        scope = scope.parent
    return scope


def _returned(node: FunctionNode) -> tuple[ast.expr, ...] | None:
    if isinstance(node, ast.Lambda):
        return (node.body,)
    if not _always_returns(node.body):
        return None  # checked first: it reads only the last statements
    found: list[ast.expr] = []
    stack: list[ast.AST] = list(node.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)):
            return None
        if isinstance(n, ast.Return):
            if n.value is None:
                return None
            found.append(n.value)
        stack.extend(ast.iter_child_nodes(n))
    return tuple(found)


# The fields that hold statements (a Return or Raise is a statement, and no expression holds
# one), and the statements whose bodies are other scopes.
_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")
_SCOPE_STATEMENTS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _first_exit(node: FunctionNode) -> tuple[int, int] | None:
    """Where the `return` or `raise` of `node`'s own code that ends first ends (line,
    column), or None when it has none. Only statements are read."""
    if isinstance(node, ast.Lambda):
        return None
    first: tuple[int, int] | None = None
    stack: list[ast.AST] = list(node.body)
    while stack:
        n = stack.pop()
        if isinstance(n, _SCOPE_STATEMENTS):
            continue
        if isinstance(n, (ast.Return, ast.Raise)):
            end = (n.end_lineno or n.lineno, n.end_col_offset or 0)
            if first is None or end < first:
                first = end
            continue
        for name in _STATEMENT_LISTS:
            stack.extend(getattr(n, name, ()))
    return first


def _always_returns(body: list[ast.stmt]) -> bool:
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    if isinstance(last, (ast.With, ast.AsyncWith)):
        return _always_returns(last.body)
    return False


def build_module(path: str, source: str, tree: ast.Module, parts: tuple[str, ...], is_package: bool) -> ModuleInfo:
    scope = Scope("module", tree, None)
    info = ModuleInfo(
        path=path,
        source=source,
        tree=tree,
        parts=parts,
        is_package=is_package,
        scope=scope,
        parents={},
        scope_of={},
        functions=[],
        function_of={},
        calls={},
        loads={},
        imports_modules=set(),
        stored_attrs=set(),
        attr_loads={},
    )
    _Builder(info).run()
    return info


# A node's position in its file, to sort nodes in source order.
_POSITION = operator.attrgetter("lineno", "col_offset")


def unique(bindings: list[Binding] | None, kind: int) -> Binding | None:
    """The one binding of `kind`, when it is the only binding of the name."""
    if bindings is None or len(bindings) != 1 or bindings[0].kind != kind:
        return None
    return bindings[0]


def enclosing_function(module: ModuleInfo, node: ast.AST) -> FunctionInfo | None:
    """The innermost def or lambda whose body holds `node` (None at module or class level)."""
    scope = module.scope_of.get(node)
    while scope is not None:
        if scope.kind == "function":
            return scope.function
        if scope.kind == "module":
            return None
        scope = scope.parent  # a class body runs where the class statement runs
    return None

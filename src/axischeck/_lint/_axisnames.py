"""Axis names: collectives over names no transform binds (AX005), names bound twice (AX006).

A function body runs in the axis environments of the places that call it. Here these are
*paths*: the transforms (innermost first) between the body and the top level of the file,
found by following the function through its uses (see `_flow`). A path that ends at module
level (or in a test or `main` function, which only a test runner or the user calls) is
*complete*; a path that gets lost (the function is returned, stored, passed to a function
the linter does not know, or used in another file) is not. A shard_map, or an axis_name
that is not a string literal, binds names the linter cannot read (a *wildcard*).

AX005 is reported only on a complete path without wildcards that has at least one
transform (one that binds no name counts: JAX raises for a collective under
`jax.vmap(f)` as well) and still does not bind the name, and only when the collective is
reached on every run of that path: no `if`, loop, `and`/`or`, `try` handler or earlier
`return` between the transform and the collective (a Python flag that is off on the vmap
path is a condition the linter cannot decide). Running such a path raises JAX's
"unbound axis name" NameError.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any

from ._callee import Resolver, Site, is_default
from ._checks import Report, describe
from ._flow import Use, expects_failure, uses_of_def, uses_of_value
from ._literals import UNKNOWN
from ._module import ASSIGN, FunctionInfo, ModuleInfo, enclosing_function, unique
from ._names import COLLECTIVES, qualname

MAX_PATHS = 32


@dataclass(frozen=True, slots=True)
class Binder:
    name: str | None  # None: a wildcard (names the linter cannot read), or no name when not `binds`
    site: Site
    binds: bool = True  # False: a transform that binds no axis name (`jax.vmap(f)`)


@dataclass(frozen=True, slots=True)
class Path:
    binders: tuple[Binder, ...]  # innermost first
    complete: bool
    conditional: bool = False  # a step inside a transform is reached only under a condition

    @property
    def names(self) -> set[str]:
        return {b.name for b in self.binders if b.name is not None}

    @property
    def wildcard(self) -> bool:
        return any(b.name is None and b.binds for b in self.binders)

    def within(self, binders: tuple[Binder, ...]) -> Path:
        """This path, for code that runs inside the transforms `binders` (innermost first) on it."""
        return Path(binders + self.binders, self.complete, self.conditional) if binders else self

    def skippable(self) -> Path:
        """This path, when the step into it runs only under a condition (which matters only
        inside a transform)."""
        return Path(self.binders, self.complete, True) if self.binders and not self.conditional else self


_LOST = Path((), False)
_TOP = Path((), True)


def binders_of(site: Site) -> tuple[Binder, ...]:
    """The axis names `site` binds for the function it maps."""
    kind = site.transform.kind
    if kind == "shard_map":
        names = site.option("axis_names")
        if isinstance(names, (set, frozenset, tuple, list)) and names and all(isinstance(n, str) for n in names):
            return tuple(Binder(n, site) for n in sorted(names))
        return (Binder(None, site),)  # every mesh axis: not known from the source
    value = site.option("axis_name")
    if is_default(value) or value is None:
        return (Binder(None, site, binds=False),) if kind != "smap" else (Binder(None, site),)
    if isinstance(value, str):
        return (Binder(value, site),)
    return (Binder(None, site),)


class AxisNames:
    """The path analysis for one project."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self._paths: dict[FunctionInfo, list[Path]] = {}
        self._active: set[FunctionInfo] = set()

    def clear(self) -> None:
        """Forget every path found (they point into syntax trees the run is done with)."""
        self._paths.clear()
        self._active.clear()

    def function_paths(self, fn: FunctionInfo) -> list[Path]:
        key = fn
        if key in self._paths:
            return self._paths[key]
        if key in self._active:
            return [_LOST]  # recursion: give up on this path
        self._active.add(key)
        try:
            result = self._function_paths(fn)
        finally:
            self._active.discard(key)
        self._paths[key] = result
        return result

    def _function_paths(self, fn: FunctionInfo) -> list[Path]:
        own: tuple[Binder, ...] = ()
        for dec in reversed(fn.decorators):  # the bottom decorator applies first
            m = self.resolver.match(dec, fn.module, fn.outer)
            if m is not None and m.fun is None:
                site = Site(m.transform, fn.module, dec, fn.outer, m.options, None, fn, readable=m.readable)
                own += binders_of(site)
        uses = (
            uses_of_value(self.resolver, fn.module, fn.node)
            if isinstance(fn.node, ast.Lambda)
            else uses_of_def(self.resolver, fn)
        )
        if _entry_point(fn) and not uses:
            return [Path(own, True)]  # nothing here calls it: a runner does, from the top level
        return [p.within(own) for p in self.from_uses(uses)]

    def from_uses(self, uses: list[Use], depth: int = 0) -> list[Path]:
        paths: list[Path] = []
        for use in uses:
            if len(paths) > MAX_PATHS or depth > 12:
                paths.append(_LOST)
                break
            if use.kind != "unknown" and expects_failure(use.module, use.node):
                paths.append(_LOST)  # a test of the error (`with pytest.raises(NameError): ...`)
            elif use.kind in ("call", "immediate"):
                maybe = use.kind == "call" and self.conditional(use.module, use.node)
                # A condition outside every transform of the path (`if __name__ == "__main__":`)
                # decides whether the path runs, not what happens inside it.
                paths.extend(p.skippable() if maybe else p for p in self.at(use.node, use.module))
            elif use.kind == "transform" and use.site is not None:
                inner = binders_of(use.site)
                later = self.from_uses(uses_of_value(self.resolver, use.module, use.site.node), depth + 1)
                paths.extend(p.within(inner) for p in later)
            else:
                paths.append(_LOST)
        return paths

    def conditional(self, module: ModuleInfo, node: ast.AST) -> bool:
        """`node` may be skipped when its function runs: it sits under an `if`, a loop, a
        conditional expression, the right of `and`/`or`, a comprehension, an `except` or
        `else` block or a `match` case, or after a `return` / `raise` of its function."""
        child = node
        parent = module.parents.get(node)
        while parent is not None and not isinstance(parent, _SCOPES):
            if _guarded(parent, child):
                return True
            child, parent = parent, module.parents.get(parent)
        if parent is None or isinstance(parent, (ast.Module, ast.ClassDef, ast.Lambda)):
            return False
        fn = module.function_of[parent]
        return fn.exits_before((getattr(node, "lineno", 0), getattr(node, "col_offset", 0)))

    def at(self, node: ast.AST, module: ModuleInfo) -> list[Path]:
        """The paths of code at `node`."""
        fn = enclosing_function(module, node)
        return [_TOP] if fn is None else self.function_paths(fn)

    # ------------------------------------------------------------------ checks

    def check_collectives(self, module: ModuleInfo, report: Report) -> None:
        """AX005 for every collective with a literal axis name in `module`."""
        for call in module.calls_of(_COLLECTIVE_NAMES):
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr not in _COLLECTIVE_NAMES:
                continue  # `jnp.sum`, `x.reshape`: not a collective under any import
            name = qualname(func, module, module.scope_of[call])
            if name not in COLLECTIVES:
                continue
            node = _axis_arg(call, COLLECTIVES[name])
            value = module.value(node) if node is not None else UNKNOWN
            names = [value] if isinstance(value, str) else list(value) if isinstance(value, tuple) else []
            if not names or not all(isinstance(n, str) for n in names):
                continue
            if name == "jax.lax.psum":
                self._check_psum_of_psum(module, call, names, report)
            fn = enclosing_function(module, call)
            if fn is None or self.conditional(module, call):
                continue  # at the top level no transform encloses it; under a condition it may not run
            for path in self.function_paths(fn):
                if not path.complete or path.wildcard or not path.binders or path.conditional:
                    continue
                missing = [n for n in names if n not in path.names]
                if missing:
                    assert node is not None
                    self._report_unbound(module, node, call, name, missing[0], path, report)
                    break

    def _check_psum_of_psum(self, module: ModuleInfo, call: ast.Call, names: list[str], report: Report) -> None:
        """AX019: `psum(psum(x, "i"), "i")`. The inner sum is the same on every member of the
        axis, and a psum of such a value multiplies it by the axis size (JAX accepts it)."""
        operand = call.args[0] if call.args and not isinstance(call.args[0], ast.Starred) else None
        if isinstance(operand, ast.Name):
            b = unique(module.lookup(operand.id, module.scope_of[operand]), ASSIGN)
            operand = b.value if b is not None and isinstance(b.value, ast.expr) else None
        if not isinstance(operand, ast.Call) or operand not in module.scope_of:
            return
        if qualname(operand.func, module, module.scope_of[operand]) != "jax.lax.psum":
            return
        inner = _axis_arg(operand, 1)
        value = module.value(inner) if inner is not None else UNKNOWN
        inner_names = [value] if isinstance(value, str) else list(value) if isinstance(value, tuple) else []
        twice = [n for n in names if n in inner_names]
        if not twice:
            return
        report(
            module,
            call,
            "AX019",
            f"psum over axis {twice[0]!r} of a value already summed over {twice[0]!r} (the psum on line"
            f" {operand.lineno}): that value is the same on every member of the axis, so the outer psum multiplies"
            f" it by the size of {twice[0]!r}; JAX does not raise and the result is that many times too large",
            "drop the outer psum",
        )

    def _report_unbound(
        self, module: ModuleInfo, node: ast.AST, call: ast.Call, name: str, axis: str, path: Path, report: Report
    ) -> None:
        short = name.rsplit(".", 1)[-1]
        sites = _unique_sites(path.binders)  # innermost first
        chain = ", inside ".join(f"{describe(b.site, None)} (line {b.site.node.lineno})" for b in sites)
        bound = sorted(path.names)
        if not bound:
            message = f"which bind{'s' if len(sites) == 1 else ''} no axis name"
        else:
            message = f"which bind{'s' if len(bound) == 1 else ''} {', '.join(repr(n) for n in bound)} and no {axis!r}"
        if not bound and len(sites) == 1 and sites[0].site.transform.kind in ("vmap", "pmap"):
            # The one transform binds no name at all: the fix is an axis_name there, so that
            # is where the finding goes (the collective's line is named in the message).
            site = sites[0].site
            report(
                site.module,
                site.node,
                "AX005",
                f"{describe(site, None)} binds no axis name, but the function it maps calls {short} over axis"
                f" {axis!r} ({module.path}:{call.lineno}); JAX raises NameError 'unbound axis name: {axis}'",
                f"axis_name={axis!r}",
            )
            return
        close = get_close_matches(axis, bound, n=1, cutoff=0.6)
        # A fix only when one name is bound and it is a near spelling; otherwise a hint.
        fix = f"use the axis name {close[0]!r}" if close and len(bound) == 1 else None
        hint = f" (did you mean {close[0]!r}?)" if close and fix is None else ""
        report(
            module,
            node,
            "AX005",
            f"{short} over axis {axis!r}, but this code runs under {chain}, {message}{hint};"
            f" JAX raises NameError 'unbound axis name: {axis}'",
            fix,
        )

    def check_shadowing(self, sites: list[Site], report: Report) -> None:
        """AX006: a transform binds an axis name that an enclosing transform already binds."""
        for site in sites:
            if "axis_name" not in site.options and "axis_names" not in site.options:
                continue  # it binds no name
            own = [b.name for b in binders_of(site) if b.name is not None]
            if not own:
                continue
            if site.decorated is not None:
                fn = site.decorated
                above: tuple[Binder, ...] = ()
                for dec in reversed(fn.decorators[: site.decorator_index]):
                    m = self.resolver.match(dec, fn.module, fn.outer)
                    if m is not None and m.fun is None:
                        above += binders_of(Site(m.transform, fn.module, dec, fn.outer, m.options, None, fn))
                paths = [Path(above + p.binders, p.complete) for p in self.from_uses(uses_of_def(self.resolver, fn))]
            else:
                paths = self.from_uses(uses_of_value(self.resolver, site.module, site.node))
            for path in paths:
                outer = next((b for b in path.binders if b.name in own), None)
                if outer is not None:
                    report(
                        site.module,
                        site.options.get("axis_name", site.node),
                        "AX006",
                        f"axis_name {outer.name!r} is bound here and again by the enclosing"
                        f" {describe(outer.site, None)} (line {outer.site.node.lineno}); JAX lets the inner"
                        f" binding hide the outer one, so collectives over {outer.name!r} inside reduce over the"
                        " inner axis only and the outer axis cannot be named",
                        None,
                    )
                    break


_COLLECTIVE_NAMES = frozenset(name.rpartition(".")[2] for name in COLLECTIVES)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _guarded(parent: ast.AST, child: ast.AST) -> bool:
    """Python evaluates `child` of `parent` only under a condition."""
    guard = _GUARDS.get(parent.__class__)
    return guard is not None and guard(parent, child)


def _not_first(field: str) -> Callable[[Any, ast.AST], bool]:
    """Every child but the one in `field` (the test, the iterable: evaluated first, always)."""
    return lambda parent, child: child is not getattr(parent, field)


# The nodes that evaluate some of their children only under a condition, by class, with
# which ones; every other node evaluates all of its children whenever it runs.
_GUARDS: dict[type, Callable[[Any, ast.AST], bool]] = {
    ast.If: _not_first("test"),
    ast.IfExp: _not_first("test"),
    ast.While: _not_first("test"),
    ast.For: _not_first("iter"),
    ast.AsyncFor: _not_first("iter"),
    ast.comprehension: _not_first("iter"),
    ast.BoolOp: lambda parent, child: child is not parent.values[0],
    **dict.fromkeys(_COMPREHENSIONS, lambda parent, child: child is not parent.generators[0]),
    ast.Try: lambda parent, child: child in parent.handlers or child in parent.orelse,
    ast.TryStar: lambda parent, child: child in parent.handlers or child in parent.orelse,
    ast.Assert: lambda parent, child: child is parent.msg,
    ast.match_case: lambda parent, child: True,
    ast.ExceptHandler: lambda parent, child: True,
}


def _unique_sites(binders: tuple[Binder, ...]) -> list[Binder]:
    seen: set[int] = set()
    out = []
    for b in binders:
        if id(b.site.node) not in seen:
            seen.add(id(b.site.node))
            out.append(b)
    return out


def _axis_arg(call: ast.Call, position: int) -> ast.expr | None:
    for k in call.keywords:
        if k.arg == "axis_name":
            return k.value
    if len(call.args) > position and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
        return call.args[position]
    return None


def _entry_point(fn: FunctionInfo) -> bool:
    """A test or `main`: called from the top level by a runner, never under a transform."""
    if isinstance(fn.node, ast.Lambda) or fn.outer.kind == "function":
        return False
    return fn.name.startswith("test") or (fn.name == "main" and fn.cls is None)

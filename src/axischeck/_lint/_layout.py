"""A mapped result combined with an argument it mapped, in another layout (AX029).

`vmap(f, in_axes=1)(x)` reads the batch from axis 1 of `x`, and out_axes (0 unless
given) stacks the results along axis 0. Nothing is wrong with that alone: a map over
columns that returns rows may be meant. But where the result is then added to,
multiplied with or subtracted from that same `x`, the program combines two layouts of
one batch: the batch axes meet by broadcasting, not example by example, and where the
sizes allow it JAX runs without a word (a Jax parallelization notebook's `(1, 3)` input
gives `(3, 1)` results, whose sum with the input is the `(3, 3)` table of every pair;
Flax NNX's tests map blocks down the columns of their input and give `out_axes=1` to
keep the outputs in columns). out_axes equal to the argument's entry keeps its layout.
"""

from __future__ import annotations

import ast
from typing import Any

from ._callee import is_default
from ._checks import SiteChecker
from ._module import ModuleInfo

_COMBINE = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def check_layout_kept(checker: SiteChecker) -> None:
    """AX029 at a call of a vmap or pmap whose result meets, in `+ - * /`, a variable the
    call passed with an int in_axes entry other than the int out_axes (both written as
    non-negative ints, so they name axes of the same rank)."""
    site = checker.site
    if site.transform.kind not in ("vmap", "pmap") or not site.readable or checker.codes:
        return
    out_axes = site.option("out_axes")
    stacked = 0 if is_default(out_axes) else out_axes
    in_axes = checker.in_axes()
    if type(stacked) is not int or stacked < 0 or not (type(in_axes) is int or isinstance(in_axes, tuple)):
        return
    for use in checker.result_uses():
        if use.kind != "call" or not isinstance(use.node, ast.Call) or not use.spelled_out():
            continue
        args, _ = use.arguments()
        for combined, partner in _combinations(use.module, use.node):
            for i, arg in enumerate(args):
                entry = _entry(in_axes, i)
                if entry is None or entry == stacked or not _same_variable(use.module, arg, partner):
                    continue
                name = partner.id
                checker.report_at(
                    use.module,
                    use.node,
                    "AX029",
                    f"the map reads the batch of {name} from its axis {entry}, and out_axes={stacked} stacks the"
                    f" results along axis {stacked}; then {ast.unparse(combined)} (line {combined.lineno}) combines"
                    f" them with {name}, whose batch is still on axis {entry}: the two layouts meet by broadcasting,"
                    f" not example by example, and JAX runs it without an error where the sizes allow",
                    f"out_axes={entry} stacks the results where {name} has its batch",
                )
                return


def _combinations(module: ModuleInfo, call: ast.Call) -> list[tuple[ast.BinOp, ast.Name]]:
    """The arithmetic the call's result takes part in, with the other operand: where the
    call is an operand itself, or where it is assigned to a name (bound once) that is one."""
    found = [_partner(module, call)]
    parent = module.parents.get(call)
    scope = module.scope_of.get(call)
    if (
        isinstance(parent, ast.Assign)
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Name)
        and scope is not None
    ):
        name = parent.targets[0].id
        owner = module.owner(name, scope)
        if owner is not None and _bound_once(module, name, scope) is not None:
            found += [_partner(module, load) for load in module.reads(name, owner)]
    return [pair for pair in found if pair is not None]


def _entry(in_axes: Any, i: int) -> int | None:
    """Argument `i`'s in_axes entry, where it is a non-negative int."""
    if isinstance(in_axes, tuple):
        in_axes = in_axes[i] if i < len(in_axes) else None
    return in_axes if type(in_axes) is int and in_axes >= 0 else None


def _partner(module: ModuleInfo, node: ast.expr) -> tuple[ast.BinOp, ast.Name] | None:
    parent = module.parents.get(node)
    if not isinstance(parent, ast.BinOp) or not isinstance(parent.op, _COMBINE):
        return None
    other = parent.right if parent.left is node else parent.left
    return (parent, other) if isinstance(other, ast.Name) else None


def _same_variable(module: ModuleInfo, a: Any, b: Any) -> bool:
    """Whether two names read the one variable, bound once."""
    if not (isinstance(a, ast.Name) and isinstance(b, ast.Name)) or a.id != b.id:
        return False
    scope_a, scope_b = module.scope_of.get(a), module.scope_of.get(b)
    if scope_a is None or scope_b is None:
        return False
    bindings = _bound_once(module, a.id, scope_a)
    return bindings is not None and bindings is module.lookup(b.id, scope_b)


def _bound_once(module: ModuleInfo, name: str, scope: Any) -> list[Any] | None:
    bindings = module.lookup(name, scope)
    return bindings if bindings is not None and len(bindings) == 1 else None

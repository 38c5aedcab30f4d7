"""The arguments a transformed function is called with, against its axes (AX013-AX016).

At each visible call of a `vmap` / `pmap` result whose arguments the interpreter can read
(`_values`), the mapped axes are resolved the way JAX resolves them: `in_axes` is a tree
prefix of the positional arguments (an int or None applies to a whole subtree), keyword
arguments are mapped over axis 0 (vmap), None leaves are not mapped. Then JAX's rules,
in the order JAX applies them:

- a mapped leaf must have the axis: a Python scalar has none (AX016), an array of rank r
  needs an axis in [-r, r) (AX014: "vmap was requested to map its argument along axis
  2, which implies that its rank should be at least 3, but is only 2");
- every mapped axis (and `axis_size`) must have one size (AX013: "vmap got inconsistent
  sizes for array axes to be mapped");
- something must be mapped: every in_axes leaf None, no keyword argument and no
  `axis_size` (AX015: "vmap must have at least one non-None value in in_axes or
  axis_size must be specified"; pmap: "pmap requires at least one argument with a mapped
  axis").

A leaf the interpreter cannot read is left out of every rule, so an unknown value never
produces a finding; a call in a `pytest.raises` block is a test of the error, not a bug.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any

from ._checks import Related, SiteChecker, _plural
from ._flow import CALL_METHODS, Use, written_to_fail
from ._jax_release import vmap_matches_containers_by_position
from ._literals import UNKNOWN, axes_text
from ._module import DEF, FunctionNode, ModuleInfo
from ._names import qualname
from ._shapes import Array, Mesh, Spec
from ._values import Values

_SCALARS = (int, float, complex, bool)


@dataclass(frozen=True, slots=True)
class Leaf:
    """One mapped leaf of the arguments."""

    label: str  # `x`, `x['w']`, `argument 2`, `keyword y`
    node: ast.expr  # the argument expression it comes from
    value: Any  # an Array or a Python scalar
    axis: int


class Unread(Exception):
    """The arguments' structure against in_axes is not certain: no rule applies."""


class NotPrefix(Exception):
    """in_axes is not a tree prefix of an argument: a container of axes where the argument
    has a leaf (an array, a number) or another container (JAX raises before any other rule)."""

    def __init__(self, label: str, node: ast.expr, axes: Any, value: Any) -> None:
        super().__init__(label)
        self.label, self.node, self.axes, self.value = label, node, axes, value


def check_calls(checker: SiteChecker, values: Values) -> int:
    """AX013-AX017 at every call of the site's result that the file shows; returns how
    many calls had every argument read."""
    site = checker.site
    kind = site.transform.kind
    if kind == "shard_map":
        return _shard_map_calls(checker, values)
    if not site.transform.native:
        return 0  # Equinox and NNX resolve the axes of each leaf their own way
    if kind not in ("vmap", "pmap", "smap") or not site.readable:
        return 0
    if kind == "smap" and not site.has("in_axes"):
        return 0  # smap infers in_axes from the arguments
    if kind == "pmap" and site.has("static_broadcasted_argnums"):
        return 0  # static arguments are dropped before in_axes is read
    if checker.codes & _AXES_CODES:
        return 0  # one mistake, one finding: in_axes is already reported at the transform
    in_axes = checker.in_axes()
    if in_axes is UNKNOWN or isinstance(in_axes, dict):
        return 0
    if isinstance(in_axes, list):
        if kind == "pmap":
            return 0  # AX002 already: pmap refuses a top-level list
        in_axes = tuple(in_axes)  # vmap reads a top-level list as a tuple
    read = 0
    for use in checker.result_uses():
        if _plain_call(use):
            assert isinstance(use.node, ast.Call)
            read += _check_call(checker, values, use, use.node, in_axes)
    return read


def _shard_map_calls(checker: SiteChecker, values: Values) -> int:
    """AX010 / AX011 / AX020 at the calls of a shard_map: in_specs (a tuple written out)
    against the positional arguments, each PartitionSpec against the rank of its argument,
    and each split dimension against the sizes of the mesh axes it is split over."""
    site = checker.site
    in_specs = site.options.get("in_specs")
    if not site.readable or checker.codes or in_specs is None:
        return 0
    specs = in_specs.elts if isinstance(in_specs, ast.Tuple) else None
    if specs is not None and any(isinstance(e, ast.Starred) for e in specs):
        return 0
    mesh = values.of(site.options.get("mesh"), site.module) if "mesh" in site.options else UNKNOWN
    read = 0
    for use in checker.result_uses():
        if not _plain_call(use) or written_to_fail(checker.resolver, use.module, use.node):
            continue
        assert isinstance(use.node, ast.Call)
        args, keywords = use.arguments()
        if keywords:
            continue
        if specs is not None and len(args) != len(specs):
            checker.report_at(
                use.module,
                use.node,
                "AX010",
                f"the call passes {_plural(len(args), 'positional argument')}, but in_specs has"
                f" {_plural(len(specs), 'entry')}; shard_map matches in_specs to the positional arguments as a tree"
                " prefix, and JAX raises ValueError 'pytree structure error: different lengths of tuple at key path"
                " shard_map in_specs'",
            )
            continue
        read += 1
        arguments = [values.of(node, use.module) for node in args]
        if specs is not None and _specs_too_long(checker, use, specs, arguments):
            continue
        if isinstance(mesh, Mesh):
            _uneven(checker, use, mesh, values.of(in_specs, site.module), arguments)
    return read


def _label(checker: SiteChecker, i: int) -> str:
    c = checker.callee
    return c.positional[i] if c is not None and i < len(c.positional) else f"argument {i}"


def _specs_too_long(checker: SiteChecker, use: Use, specs: list[ast.expr], arguments: list[Any]) -> bool:
    assert isinstance(use.node, ast.Call)
    for i, (spec, value) in enumerate(zip(specs, arguments, strict=True)):
        rank = value.rank if isinstance(value, Array) else 0 if type(value) in _SCALARS else None
        name = _label(checker, i)
        if rank is not None and checker.spec_too_long(
            spec, (rank,), f"in_specs entry {i} for {name}", f"{name} ({_short_value(value)})",
            f"the call on line {use.node.lineno}",
        ):  # fmt: skip
            return True
    return False


def _uneven(checker: SiteChecker, use: Use, mesh: Mesh, specs: Any, arguments: list[Any]) -> None:
    """AX020: a dimension split over mesh axes whose sizes do not divide it (JAX: 'argument
    arrays with axis sizes that are not evenly divisible by the corresponding mesh axis sizes')."""
    if isinstance(specs, Spec):
        specs = (specs,) * len(arguments)  # one spec is a prefix of every argument
    if not isinstance(specs, tuple) or len(specs) != len(arguments):
        return
    for i, (spec, value) in enumerate(zip(specs, arguments, strict=True)):
        if not isinstance(spec, Spec) or not isinstance(value, Array) or len(spec.entries) > value.rank:
            continue
        for dim, names in enumerate(spec.entries):
            sizes = [mesh.size(n) for n in names]
            size = value.shape[dim]
            if not names or size is None or any(n is None for n in sizes):
                continue
            parts = math.prod(n for n in sizes if n is not None)
            if size % parts:
                over = " x ".join(f"{n!r} ({k})" for n, k in zip(names, sizes, strict=True))
                checker.report_at(
                    use.module,
                    use.node,
                    "AX020",
                    f"{_label(checker, i)} has shape {value.text()}, and in_specs {spec.text()} splits its dimension"
                    f" {dim} ({size}) over {over} of the mesh, {parts} parts: {size} is not a multiple of {parts};"
                    " JAX raises ValueError 'shard_map applied to the function ... was given argument arrays with"
                    " axis sizes that are not evenly divisible by the corresponding mesh axis sizes'",
                )
                return


def _scalar_fix(checker: SiteChecker, scalar: Leaf, args: list[ast.expr]) -> str | None:
    """The fix for a mapped Python scalar: in_axes None passes it whole to every call; but
    pmap traces what it does not map, so a scalar the function uses as a size (`range(n)`,
    `jnp.zeros(n)`, a slice, a Python `if`) must be static there. None for a scalar
    inside a container (its entry is the user's to write)."""
    if "[" in scalar.label:
        return None
    position = next((i for i, node in enumerate(args) if node is scalar.node), None)
    callee = checker.callee
    if (
        checker.site.transform.kind == "pmap"
        and position is not None
        and callee is not None
        and callee.func is not None
        and position < len(callee.positional)
        and _used_as_size(callee.func.node, callee.positional[position])
    ):
        static = sorted({*(checker.static_argnums() or ()), position})
        return (
            f"static_broadcasted_argnums={axes_text(tuple(static))} ({scalar.label} is used as a size, which pmap"
            " cannot trace: static, it is passed to every device as a Python value)"
        )
    return f"in_axes None for {scalar.label} (a scalar is passed whole to every call)"


_SIZE_CALLS = frozenset(
    {
        "range", "int", "zeros", "ones", "empty", "full", "arange", "eye", "identity", "linspace", "reshape",
        "tile", "repeat", "broadcast_to", "one_hot", "split", "array_split", "top_k",
    }
)  # fmt: skip
"""Functions whose arguments must be concrete Python values (sizes, shapes, counts)."""


def _used_as_size(func: FunctionNode, name: str) -> bool:
    """Whether the function's body uses the parameter `name` where a traced value cannot
    go: an argument (or inside a shape tuple) of a call in `_SIZE_CALLS`, a slice bound,
    or the test of a Python `if`, `while` or conditional expression."""
    body: list[ast.AST] = [func.body] if isinstance(func, ast.Lambda) else list(func.body)

    def names_it(node: ast.AST | None) -> bool:
        return node is not None and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))

    for top in body:
        for node in ast.walk(top):
            if isinstance(node, ast.Call):
                callee = node.func
                called = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", None)
                if called in _SIZE_CALLS and any(names_it(a) for a in (*node.args, *(k.value for k in node.keywords))):
                    return True
            elif isinstance(node, ast.Slice) and any(names_it(b) for b in (node.lower, node.upper, node.step)):
                return True
            elif isinstance(node, ast.If | ast.While | ast.IfExp) and names_it(node.test):
                return True
    return False


def _short_value(value: Any) -> str:
    return f"shape {value.text()}" if isinstance(value, Array) else f"the Python scalar {value!r}"


_AXES_CODES = frozenset({"AX001", "AX002", "AX003", "AX009"})


def _plain_call(use: Use) -> bool:
    call = use.node
    if use.kind != "call" or not use.keeps_signature or use.implicit or not isinstance(call, ast.Call):
        return False
    if isinstance(call.func, ast.Attribute) and call.func.attr in CALL_METHODS:
        return False  # predict / explain take shapes for arrays; lower / trace take specs
    return use.spelled_out()


def _check_call(checker: SiteChecker, values: Values, use: Use, call: ast.Call, in_axes: Any) -> bool:
    """The checks at one call; True when every argument was read."""
    site = checker.site
    kind = site.transform.kind
    args, keywords = use.arguments()

    def report(
        module: ModuleInfo, node: ast.AST, code: str, message: str, fix: str | None = None, related: Related = ()
    ) -> None:
        # Asked only for a finding: it follows the function's uses.
        if not written_to_fail(checker.resolver, use.module, use.node):
            checker.report_at(module, node, code, message, fix, related)

    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        return False  # AX001's finding
    names = checker.callee.positional if checker.callee is not None else ()
    # smap with every in_axes None runs: each shard gets the whole (replicated) argument.
    if args and not keywords and not site.has("axis_size") and kind != "smap" and _unmapped(in_axes):
        report(
            use.module,
            call,
            "AX015",
            f"{'in_axes is None' if in_axes is None else f'every in_axes entry is None, {axes_text(in_axes)}'},"
            " the call passes no keyword argument and there is"
            f" no axis_size, so nothing is mapped and {kind} cannot know the size of the mapped axis; JAX raises"
            f" ValueError {_none_error(kind)}",
            "map at least one argument (an int entry in in_axes), or pass axis_size" if kind == "vmap" else None,
        )
        return True
    if kind == "smap" and keywords:
        return False  # smap's keyword arguments: not read here
    by_position = kind == "vmap" and site.transform.native and vmap_matches_containers_by_position()
    leaves: list[Leaf] = []
    unread = False
    for i, node in enumerate(args):
        axes = in_axes[i] if isinstance(in_axes, tuple) else in_axes
        if axes is None:
            continue  # passed whole to every call: no rule reads its value
        label = names[i] if i < len(names) else f"argument {i}"
        iterator = _iterator(node, use.module)
        if iterator is not None:
            report(
                use.module,
                node,
                "AX024",
                f"{label} is {iterator}, an iterator, where in_axes maps an argument: {kind} maps arrays (or"
                f" pytrees of them), not the items an iterator yields; JAX raises TypeError 'is not a valid"
                " JAX type'",
                None,
            )
            return True
        function = _function(node, use.module)
        if function is not None:
            report(
                use.module,
                node,
                "AX026",
                f"{label} is {function}, where in_axes maps an argument: {kind} maps arrays (or pytrees of them),"
                " and a function has no axis; JAX raises TypeError 'is not a valid JAX type'",
                f"static_broadcasted_argnums=({i},) passes it to every device as it is"
                if kind == "pmap"
                else f"give {label} the in_axes entry None (a function is passed whole)",
            )
            return True
        try:
            _collect(values.of(node, use.module), axes, label, node, leaves, kind != "smap", by_position)
        except Unread:
            unread = True
        except NotPrefix as bad:
            report(use.module, bad.node, "AX017", _not_prefix(kind, bad))
            return True
    if kind == "vmap":  # JAX maps every keyword argument over axis 0
        for k in keywords:
            assert k.arg is not None
            try:
                _collect(values.of(k.value, use.module), 0, k.arg, k.value, leaves, True, by_position)
            except Unread:
                unread = True
    # A mapped Python scalar is a mistake whatever the other arguments are.
    scalar = next((leaf for leaf in leaves if isinstance(leaf.value, _SCALARS)), None)
    if scalar is not None:
        report(
            use.module,
            scalar.node,
            "AX016",
            f"{scalar.label} is the Python scalar {scalar.value!r}, which has no axis to map, but in_axes maps it"
            f" over axis {scalar.axis}; JAX raises {_scalar_error(kind, scalar)}",
            _scalar_fix(checker, scalar, args),
        )
        return True
    if unread:
        return False
    partly = any(leaf.value is UNKNOWN for leaf in leaves)
    leaves = [leaf for leaf in leaves if leaf.value is not UNKNOWN]
    for leaf in leaves:
        assert isinstance(leaf.value, Array)
        r = leaf.value.rank
        if not -r <= leaf.axis < r:
            within = f"so the axis must be in [{-r}, {r - 1}]" if r else "an array with no axis to map"
            report(
                use.module,
                leaf.node,
                "AX014",
                f"in_axes asks for axis {leaf.axis} of {leaf.label}, but {leaf.label} has shape {leaf.value.text()}"
                f" (rank {r}, {within}); JAX raises {_rank_error(kind, leaf.axis, r)}",
                f"in_axes None for {leaf.label} (it has no axis: it is passed whole to every call)" if not r else None,
            )
            return True
    if kind == "smap":
        return not partly  # smap splits the mapped axes over a mesh axis: sizes are not compared here
    sized = [(leaf, leaf.value.shape[leaf.axis]) for leaf in leaves if isinstance(leaf.value, Array)]
    known = [(leaf, size) for leaf, size in sized if size is not None]
    axis_size = site.option("axis_size") if kind == "vmap" else UNKNOWN
    if type(axis_size) is int and known and any(size != axis_size for _, size in known):
        leaf, size = next((leaf, size) for leaf, size in known if size != axis_size)
        report(
            use.module,
            call,
            "AX013",
            f"axis_size={axis_size}, but {_where(leaf)} has size {size}; JAX raises ValueError 'vmap got inconsistent"
            " sizes for array axes to be mapped'",
            related=((use.module, leaf.node, f"{_where(leaf)} has size {size}"),),
        )
        return True
    for leaf, size in known[1:]:
        first, first_size = known[0]
        if size != first_size:
            report(
                use.module,
                call,
                "AX013",
                f"the mapped axes disagree on the batch size: {_where(first)} has size {first_size}, but"
                f" {_where(leaf)} has size {size}; JAX raises ValueError {_size_error(kind)}",
                related=(
                    (use.module, first.node, f"{_where(first)} has size {first_size}"),
                    (use.module, leaf.node, f"{_where(leaf)} has size {size}"),
                ),
            )
            return True
    return not partly


def _unmapped(in_axes: Any) -> bool:
    """Every in_axes leaf is None: no argument is mapped (read up to the first leaf that is not)."""
    if isinstance(in_axes, (tuple, list)):
        return all(_unmapped(a) for a in in_axes)
    if isinstance(in_axes, dict):
        return all(_unmapped(a) for a in in_axes.values())
    return in_axes is None


def _collect(
    value: Any, axes: Any, label: str, node: ast.expr, out: list[Leaf], prefix: bool, by_position: bool
) -> None:
    """The mapped leaves of `value` under the in_axes prefix `axes` (JAX's tree-prefix rule).
    With `prefix`, a container of axes against a leaf or another container raises NotPrefix.
    With `by_position` (jax.vmap from 0.12.1), a container of axes meets any container with
    as many children, dicts with the same keys, child by child in flatten order."""
    if axes is None:
        return
    if value is UNKNOWN:
        raise Unread
    if type(axes) is int:
        _broadcast(value, axes, label, node, out)
        return
    if isinstance(axes, dict) and isinstance(value, dict) and set(value) == set(axes):
        for k in sorted(value, key=repr):
            _collect(value[k], axes[k], f"{label}[{k!r}]", node, out, prefix, by_position)
        return
    same_kind = isinstance(axes, (tuple, list)) and type(value) is type(axes)
    if (same_kind or by_position and _container(axes) and _container(value)) and len(value) == len(axes):
        for (key, v), a in zip(_children(value), _children(axes), strict=True):
            _collect(v, a[1], f"{label}[{key!r}]", node, out, prefix, by_position)
        return
    if prefix and isinstance(axes, (tuple, list, dict)) and _plain_tree(value):
        # JAX flattens in_axes up to the arguments' structure: a tuple of axes where the
        # argument is an array or a number (or a dict, a list of another length) is refused.
        raise NotPrefix(label, node, axes, value)
    raise Unread


_ITERATORS = frozenset({"zip", "map", "filter", "iter", "reversed", "enumerate"})


def _iterator(node: ast.expr, module: ModuleInfo) -> str | None:
    """How the argument at `node` makes an iterator (`zip(...)`, a generator expression),
    if it plainly does: a call of a builtin iterator not rebound in the module."""
    if isinstance(node, ast.GeneratorExp):
        return "a generator expression"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _ITERATORS:
        if node.func.id not in module.scope.bindings:
            return f"{node.func.id}(...)"
    return None


_NOT_FUNCTIONS = frozenset({"e", "pi", "inf", "nan", "euler_gamma", "newaxis", "initializers"})
"""Names of `jax.numpy` and `jax.nn` that are no function (constants, a submodule)."""


def _function(node: ast.expr, module: ModuleInfo) -> str | None:
    """What function the argument at `node` plainly is: a lambda, an undecorated `def` of
    the file (its only binding), or a function of `jax.nn` or `jax.numpy` (`jax.nn.softplus`)."""
    if isinstance(node, ast.Lambda):
        return "a lambda"
    root = node
    while isinstance(root, ast.Attribute):
        root = root.value
    scope = module.scope_of.get(root) if isinstance(root, ast.Name) else None
    if scope is None:
        return None
    if isinstance(node, ast.Name):
        bindings = module.lookup(node.id, scope)
        plain = bindings and all(b.kind == DEF and not getattr(b.node, "decorator_list", ()) for b in bindings)
        return f"the function {node.id}" if plain else None  # a decorated def may be a pytree (a Partial)
    name = qualname(node, module, scope)
    if name is None or name.rsplit(".", 1)[-1] in _NOT_FUNCTIONS:
        return None
    package, _, attr = name.rpartition(".")
    return f"the function {ast.unparse(node)}" if package in ("jax.nn", "jax.numpy") and attr else None


def _container(value: Any) -> bool:
    return type(value) in (tuple, list, dict)


def _children(value: Any) -> list[tuple[Any, Any]]:
    """(key, child) of a tuple, list or dict read by the interpreter, in JAX's flatten order."""
    if isinstance(value, dict):
        return [(k, value[k]) for k in sorted(value, key=repr)]
    return list(enumerate(value))


def _plain_tree(value: Any) -> bool:
    """An array, a number, or a tuple/list/dict the interpreter read (not a custom pytree)."""
    return isinstance(value, (Array, tuple, list, dict)) or type(value) in _SCALARS


def _not_prefix(kind: str, bad: NotPrefix) -> str:
    value = bad.value
    if isinstance(value, Array):
        has = f"an array of shape {value.text()} (a single leaf)"
    elif type(value) in _SCALARS:
        has = f"the Python scalar {value!r} (a single leaf)"
    elif isinstance(value, dict):
        has = f"a dict with keys {', '.join(map(repr, value))}"
    else:
        has = f"a {type(value).__name__} of {len(value)}"
    extra = (
        " (one vmap maps one axis of each argument: nest two vmaps to map two axes)"
        if isinstance(value, Array) and isinstance(bad.axes, tuple) and all(type(a) is int for a in bad.axes)
        else ""
    )
    return (
        f"in_axes gives {bad.label} the {type(bad.axes).__name__} of axes {axes_text(bad.axes)}, but {bad.label} is"
        f" {has}; in_axes must be a tree prefix of the arguments{extra}, and JAX raises ValueError"
        f" '{kind} in_axes specification must be a tree prefix of the corresponding value'"
    )


def _broadcast(value: Any, axis: int, label: str, node: ast.expr, out: list[Leaf]) -> None:
    """An int axis applies to every leaf below it."""
    if value is None:
        return  # an empty subtree
    if isinstance(value, Array) or type(value) in _SCALARS:
        out.append(Leaf(label, node, value, axis))
        return
    if isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            _broadcast_item(v, axis, f"{label}[{i}]", node, out)
        return
    if isinstance(value, dict):
        for k in sorted(value, key=repr):
            _broadcast_item(value[k], axis, f"{label}[{k!r}]", node, out)
        return
    raise Unread


def _broadcast_item(value: Any, axis: int, label: str, node: ast.expr, out: list[Leaf]) -> None:
    """An item of a tuple, list or dict the file writes out: one the interpreter cannot read
    is kept as an unread leaf (the rules skip it; the other leaves are still certain)."""
    if value is UNKNOWN:
        out.append(Leaf(label, node, UNKNOWN, axis))
        return
    _broadcast(value, axis, label, node, out)


def _where(leaf: Leaf) -> str:
    assert isinstance(leaf.value, Array)
    return f"axis {leaf.axis} of {leaf.label} (shape {leaf.value.text()})"


def _size_error(kind: str) -> str:
    if kind == "pmap":
        return "(pmap splits every mapped argument over the same devices, so their sizes must agree)"
    return "'vmap got inconsistent sizes for array axes to be mapped'"


def _none_error(kind: str) -> str:
    if kind == "pmap":
        return "'pmap requires at least one argument with a mapped axis.'"
    return "'vmap must have at least one non-None value in in_axes or axis_size must be specified'"


def _scalar_error(kind: str, leaf: Leaf) -> str:
    if kind == "smap":
        return (
            "ValueError 'shard_map applied to the function ... was given an in_specs entry which is too long to be"
            " compatible with the corresponding input value' (smap maps the argument over a mesh axis)"
        )
    if kind == "pmap":
        return "ValueError (pmap can only split arrays with a leading axis over the devices)"
    return _rank_error(kind, leaf.axis, 0)


def _rank_error(kind: str, axis: int, rank: int) -> str:
    if kind == "smap":
        return "ValueError (smap's in_axes names an axis the argument does not have)"
    if kind == "pmap":
        return f"an error (pmap splits axis {axis} over the devices, and there is no such axis)"
    return (
        f"ValueError 'vmap was requested to map its argument along axis {axis}, which implies that its rank"
        f" should be at least {axis + 1 if axis >= 0 else -axis}, but is only {rank}'"
    )

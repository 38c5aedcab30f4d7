"""The per-site checks: axes against the mapped function (AX001-AX004, AX007-AX012).

Each check states the facts the way axischeck's runtime errors do: the transform and its
options, the argument by name, its declared rank, what JAX does with it, and a fix when
exactly one change is right. A check that needs a value it cannot read stays silent.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from .._core._option_names import MEANT as _MEANT
from .._core._option_names import STATIC_OPTIONS, unmapped_instead
from ._callee import Callee, Resolver, Site, is_default
from ._flow import Use, expects_failure, uses_of_def, uses_of_value, written_to_fail
from ._jax_release import vmap_matches_containers_by_position
from ._literals import UNKNOWN, axes_text, axis_leaves, bad_axis
from ._module import ModuleInfo
from ._names import OPTION_NAMES, PARTITION_SPEC, qualname
from ._parsers import Ranks, SignatureError, parse_signature

if TYPE_CHECKING:
    from .._core._spec import SigCore

Related = tuple[tuple[ModuleInfo, ast.AST, str], ...]
"""Other places a finding is about (the conflicting argument), each with what it holds."""


class Report(Protocol):
    """How a check reports a finding: where, its code, message, fix and related places."""

    def __call__(
        self, module: ModuleInfo, node: ast.AST, code: str, message: str, fix: str | None = None, related: Related = ()
    ) -> None: ...


def _short(node: ast.AST | None, limit: int = 60) -> str:
    if node is None:
        return ""
    try:
        text = ast.unparse(node)
    except Exception:  # a tree ast.unparse cannot print
        return "..."
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe(site: Site, callee: Callee | None) -> str:
    """`vmap(f, in_axes=(0, None), out_axes=0)`, as the runtime errors name a transform."""
    if callee is not None:
        name = callee.name
    elif site.decorated is not None:
        name = site.decorated.qualname
    elif isinstance(site.fun, ast.Lambda):
        name = "<lambda>"
    elif isinstance(site.fun, (ast.Name, ast.Attribute)):
        name = _short(site.fun, 30)
    else:
        name = "<function>"
    shown = [f"{k}={_short(site.options[k])}" for k in _SHOWN[site.transform.kind] if k in site.options]
    return f"{site.transform.spelled or site.transform.kind}({', '.join([name, *shown])})"


_SHOWN = {
    "vmap": ("in_axes", "out_axes", "axis_name"),
    "pmap": ("axis_name", "in_axes", "out_axes"),
    "smap": ("in_axes", "out_axes", "axis_name"),
    "shard_map": ("in_specs", "out_specs"),
}


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") else f"{n} {word}s"


def _bool_note(leaf: object) -> str:
    return f" ({leaf!r} is a bool, not the axis {int(leaf)})" if isinstance(leaf, bool) else ""


_UNREAD: Any = object()  # a value not worked out yet


def _node_of(site: Site, option: str) -> ast.AST:
    return site.options.get(option, site.node)


class SiteChecker:
    """Runs every per-site check on one site."""

    def __init__(self, resolver: Resolver, site: Site, callee: Callee | None, report: Report) -> None:
        self.resolver = resolver
        self.site = site
        self.callee = callee
        self.report = report
        self._expected: bool | None = None
        self.codes: set[str] = set()  # the codes reported at the site itself
        self._uses: list[Use] | None = None
        self._in_axes: Any = _UNREAD

    @property
    def what(self) -> str:
        """The transform as messages name it (built only for a finding: it prints the options)."""
        return describe(self.site, self.callee)

    def emit(self, node: ast.AST, code: str, message: str, fix: str | None = None) -> None:
        self.codes.add(code)
        if not self._expected_failure():
            self.report(self.site.module, node, code, f"{self.what}: {message}", fix)

    def report_at(
        self, module: ModuleInfo, node: ast.AST, code: str, message: str, fix: str | None = None, related: Related = ()
    ) -> None:
        """A finding at a use of the site (a call of its result), named after the transform."""
        if not self._expected_failure():
            self.report(module, node, code, f"{self.what}: {message}", fix, related)

    def _expected_failure(self) -> bool:
        """The site, or every use of what it returns, is in code written to fail (a
        `pytest.raises` block, or a test's helper only called there: see `written_to_fail`)."""
        if self._expected is None:
            site, resolver = self.site, self.resolver
            if written_to_fail(resolver, site.module, site.node):
                self._expected = True
            else:
                uses = self.result_uses()
                self._expected = bool(uses) and all(
                    u.kind != "unknown" and written_to_fail(resolver, u.module, u.node) for u in uses
                )
        return self._expected

    def run(self) -> bool:
        """The site's checks; True when the transform itself is refused when it is made
        (a keyword it does not take): nothing else about it is read."""
        kind = self.site.transform.kind
        if self.check_option_names():
            return True  # JAX raises TypeError before reading any option
        if kind == "shard_map":
            self.check_specs()
            return False
        if not self.site.transform.native:
            self.check_library_in_axes()
            return False
        length_reported = self.check_in_axes()
        if not self.codes and self.check_mapped_self():
            return False  # JAX refuses every call of the method: nothing else of them is read
        self.check_out_axes()
        sig = self.check_signature()
        self.check_ranges(sig)
        if not length_reported:
            self.check_calls()
        return False

    # ------------------------------------------------------------- options

    def check_option_names(self) -> bool:
        """AX023: a keyword the transform does not take (`axis=`, `in_axis=`, `out_axis=`),
        with the option meant; True when one was found."""
        t = self.site.transform
        known = OPTION_NAMES.get((t.kind, t.native, t.lib == "axischeck", t.positional))
        if known is None:
            return False
        for name, node in self.site.options.items():
            if name in known:
                continue
            meant = _MEANT.get(name) if _MEANT.get(name) in known else None
            if meant is None:
                close = difflib.get_close_matches(name, sorted(known), n=1)
                meant = close[0] if close else None
            value = self.site.option(name)
            shown = axes_text(value) if value is not UNKNOWN else "..."
            kind = t.title.split(".")[-1]
            did = f"; did you mean {meant}?" if meant else ""
            if not did and name in STATIC_OPTIONS and "in_axes" in known:
                did = f"; {unmapped_instead(kind, value if value is not UNKNOWN else ())}"
            self.emit(
                node,
                "AX023",
                f"{kind}() takes no option {name!r} (JAX raises TypeError 'got an unexpected keyword"
                f" argument {name!r}'){did}",
                f"{meant}={shown}" if meant and value is not UNKNOWN else None,
            )
            return True
        return False

    # ------------------------------------------------------------- in_axes

    def in_axes(self) -> Any:
        """The in_axes value (JAX's default 0 when not given; UNKNOWN when not read). Every
        check asks for it: it is worked out once per site."""
        if self._in_axes is _UNREAD:
            value = self.site.option("in_axes")
            if is_default(value):
                t = self.site.transform
                value = 0 if t.kind != "smap" and t.lib != "equinox" else UNKNOWN  # Equinox: if_array(0)
            self._in_axes = value
        return self._in_axes

    def check_mapped_self(self) -> bool:
        """AX027: a vmap or pmap decorating a method of a plain class (no base, no class
        decorator: no pytree) whose in_axes maps its first argument, `self` (jax#9248): the
        object has no axis, and JAX refuses every call of the method. True when found."""
        site, kind = self.site, self.site.transform.kind
        fn = site.decorated
        if kind not in ("vmap", "pmap") or fn is None or fn.cls is None or fn.params.positional[:1] != ("self",):
            return False  # a namespace class's function takes no self
        cls = fn.cls.node
        if cls.bases or cls.keywords or cls.decorator_list or _maybe_pytree(cls, site.module):
            return False  # a pytree as likely (a dataclass registered, a Module)
        decorators = fn.node.decorator_list if not isinstance(fn.node, ast.Lambda) else []
        if any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in decorators):
            return False
        if kind == "pmap" and site.has("static_broadcasted_argnums"):
            return False
        in_axes = self.in_axes()
        first = in_axes[0] if isinstance(in_axes, tuple) and in_axes else in_axes
        if type(first) is not int:
            return False
        name = fn.params.positional[0]
        fix = (
            f"static_broadcasted_argnums=(0,) passes {name} to every device as it is"
            if kind == "pmap"
            else f"give {name} the in_axes entry None (in_axes=(None, ...)): the object is passed whole"
        )
        self.emit(
            site.node,
            "AX027",
            f"{name}, the {fn.cls.name} object of the method {fn.name}, is no array and its class is no pytree, but"
            f" in_axes maps it over axis {first}; JAX raises TypeError ('is not a valid JAX type') at every call",
            fix,
        )
        return True

    def check_library_in_axes(self) -> None:
        """Equinox's filter_vmap / filter_pmap and Flax NNX's vmap / pmap: the in_axes checks
        their semantics share with JAX's. A tuple in_axes is matched to the positional
        arguments as a tree prefix (Equinox: `jtu.tree_map(_resolve_axis, in_axes, args)`;
        NNX hands it to jax.vmap), so its length is checked (AX001) and its leaves must be
        ints or None (callables such as `eqx.if_array(0)` and `nnx.StateAxes` are read as
        unknown). Equinox refuses keyword arguments at a call (AX003); a dict in_axes names
        parameters there, so it is not AX003's."""
        site = self.site
        value = self.in_axes()
        if value is UNKNOWN or isinstance(value, dict) or not isinstance(value, tuple):
            self._library_calls()
            return
        node = _node_of(site, "in_axes")
        for i, entry in enumerate(value):
            bad = [leaf for leaf in axis_leaves(entry) if bad_axis(leaf) and not callable(leaf)]
            if bad and site.transform.lib == "flax" and isinstance(bad[0], str):
                bad = []  # NNX reads some strings (filters) inside StateAxes; not ours to judge
            if bad:
                self.emit(
                    node,
                    "AX002",
                    f"in_axes entry {i}{self._param(i)} holds {bad[0]!r} (of type {type(bad[0]).__name__}), but"
                    f" axes must be ints or None{_bool_note(bad[0])}; "
                    + (
                        "Equinox raises ValueError '`in_axes` and `out_axes` must consist of None, ints, and"
                        " callables only.'"
                        if site.transform.lib == "equinox"
                        else "JAX raises TypeError"
                    ),
                    _leaf_fix(bad[0]),
                )
                return
        if self.callee is not None and site.readable and self._in_axes_length(list(value), node):
            return
        self._library_calls()

    def _library_calls(self) -> None:
        """AX003 at a call of an Equinox-mapped function that passes keyword arguments."""
        if self.site.transform.lib != "equinox" or not self.site.readable:
            return
        for use, call in self.signature_calls():
            _, keywords = use.arguments()
            if keywords and not expects_failure(use.module, call):
                self.report(
                    use.module,
                    call,
                    "AX003",
                    f"{self.what}: the call passes {', '.join(repr(k.arg or '**') for k in keywords)} by keyword,"
                    f" but a function wrapped with {self.site.transform.spelled} takes positional arguments only;"
                    " Equinox raises RuntimeError 'keyword arguments cannot be used with functions wrapped with"
                    f" `{self.site.transform.spelled}`'",
                    "pass them by position" if all(k.arg is not None for k in keywords) else None,
                )

    def check_in_axes(self) -> bool:
        """AX001/AX002/AX003 at the transform. True when a length finding was reported."""
        site, callee = self.site, self.callee
        kind = site.transform.kind
        value = self.in_axes()
        node = _node_of(site, "in_axes")
        if value is UNKNOWN:
            return False
        if isinstance(value, dict):
            self._dict_in_axes(value, node)
            return True
        if kind == "pmap" and isinstance(value, list):
            fix = f"in_axes={axes_text(tuple(value))}"
            self.emit(
                node,
                "AX002",
                f"pmap in_axes is a list, {axes_text(value)}, but the positional arguments form a tuple;"
                " unlike vmap, pmap does not read a top-level list as a tuple, and JAX raises"
                " 'pytree structure error: different types'",
                fix,
            )
            return True
        if not (value is None or type(value) is int or isinstance(value, (tuple, list))):
            self.emit(
                node,
                "AX002",
                f"in_axes must be an int, None, or a tuple with one entry per positional argument, but it is"
                f" {value!r} (of type {type(value).__name__}); JAX raises TypeError",
                _leaf_fix(value),
            )
            return True
        entries = list(value) if isinstance(value, (tuple, list)) else None
        if entries is not None:
            for i, entry in enumerate(entries):
                if entry is None or type(entry) is int:
                    continue  # an axis, or not mapped
                bad = [leaf for leaf in axis_leaves(entry) if bad_axis(leaf)]
                if bad:
                    arg = self._param(i)
                    self.emit(
                        node,
                        "AX002",
                        f"in_axes entry {i}{arg} holds {bad[0]!r} (of type {type(bad[0]).__name__}), but axes must be"
                        f" ints or None{_bool_note(bad[0])}; JAX raises TypeError 'vmap in_axes must be an int, None,"
                        " or (nested) container with those types as leaves'",
                        _leaf_fix(bad[0]),
                    )
                    return True
        if entries is None or callee is None or not site.readable:
            return False
        if kind == "pmap" and site.has("static_broadcasted_argnums"):
            return self._static_in_axes(entries, node)
        return self._in_axes_length(entries, node)

    def static_argnums(self) -> tuple[int, ...] | None:
        """pmap's static_broadcasted_argnums as non-negative positions, or None when not read."""
        value = self.site.option("static_broadcasted_argnums")
        if type(value) is int:
            value = (value,)
        if not isinstance(value, tuple) or not value or not all(type(v) is int and v >= 0 for v in value):
            return None
        return value

    def _static_in_axes(self, entries: list[Any], node: ast.AST) -> bool:
        """AX001 for pmap with static arguments: JAX picks the in_axes entries of the dynamic
        positions by index (`in_axes[i] for i in dyn_argnums`), so in_axes needs an entry
        (None) for each static position before the last dynamic one."""
        c, static = self.callee, self.static_argnums()
        if c is None or static is None or c.varargs or c.self_param or self._may_pass_by_keyword():
            return False
        n = len(entries)
        beyond = [i for i in range(c.required) if i not in static and i >= n]
        if not beyond:
            return False
        dynamic = [i for i in range(len(c.positional)) if i not in static]
        fix = None
        if len(dynamic) == n:
            given = iter(entries)
            fix = f"in_axes={axes_text(tuple(None if i in static else next(given) for i in range(len(c.positional))))}"
        self.emit(
            node,
            "AX001",
            f"in_axes has {_plural(n, 'entry')}, but with static_broadcasted_argnums={axes_text(static)} pmap reads"
            f" the entry of each dynamic argument by its position among all {len(c.positional)} positional"
            f" arguments ({c.param_list()}): {c.positional[beyond[0]]} is argument {beyond[0]} and in_axes has no"
            " such entry, so JAX raises IndexError 'tuple index out of range' (in_axes needs a None for each static"
            " argument)",
            fix,
        )
        return True

    def _param(self, i: int) -> str:
        c = self.callee
        if c is not None and i < len(c.positional):
            return f" (for {c.positional[i]})"
        return ""

    def _in_axes_length(self, entries: list[Any], node: ast.AST) -> bool:
        c = self.callee
        assert c is not None
        n, p, r = len(entries), len(c.positional), c.required
        if not c.varargs and n > p:
            if c.kwonly and n <= p + len(c.kwonly):
                extra = c.kwonly[: n - p]
                self.emit(
                    node,
                    "AX003",
                    f"in_axes has {n} entries but {_takes(c)}; {', '.join(map(repr, extra))}"
                    f" {'is' if len(extra) == 1 else 'are'} keyword-only, and in_axes covers only positional"
                    " arguments (JAX maps keyword arguments over axis 0): every call fails with"
                    f" 'len(in_axes)={n}, len(args)={p}' or a TypeError",
                    f"in_axes={axes_text(tuple(entries[:p]))}" if p and entries[p:] == [0] * (n - p) else None,
                )
                return True
            fix = None
            if c.sites == () and self._bound_self() and entries[0] is None and n == p + 1:
                fix = f"in_axes={axes_text(tuple(entries[1:]))} (self is already bound)"
            self.emit(
                node,
                "AX001",
                f"in_axes has {n} entries but {_takes(c)}: a tuple in_axes needs one entry per positional"
                f" argument, so every call fails (with {p} arguments JAX raises {self._len_error(n, p)};"
                f" with {n}, {c.name} itself raises TypeError)",
                fix,
            )
            return True
        if n < r:
            missing = c.positional[n:r]
            if c.posonly <= n and self._may_pass_by_keyword():
                return False  # the rest may be passed by keyword somewhere: that works (mapped over axis 0)
            fix = None
            if c.self_param and n == r - 1 and c.sites == () and self.site.decorated is not None:
                fix = f"in_axes={axes_text((None, *entries))} (None for self)"
            names = ", ".join(missing)
            self.emit(
                node,
                "AX001",
                f"in_axes has {n} {'entry' if n == 1 else 'entries'} but {_takes(c)}, {r} of them required:"
                f" {names} {'gets' if len(missing) == 1 else 'get'} no entry, and every call in this file passes"
                f" {'it' if len(missing) == 1 else 'them'} by position, so JAX raises {self._len_error(n, r)}"
                + (
                    " (JAX counts self: a method decorated in its class body gets it as its first argument)"
                    if c.self_param and self.site.decorated is not None
                    else ""
                ),
                fix,
            )
            return True
        return False

    def _len_error(self, n_axes: int, n_args: int) -> str:
        if not self.site.transform.native:  # Equinox and NNX match in_axes to the arguments with jax.tree.map
            return "ValueError 'pytree structure error: different lengths of tuple' (in_axes against the arguments)"
        return _len_error(n_axes, n_args, self.site.transform.kind)

    def _bound_self(self) -> bool:
        fun = self.site.fun
        return isinstance(fun, ast.Attribute) and isinstance(fun.value, ast.Name)

    def _dict_in_axes(self, value: dict[Any, Any], node: ast.AST) -> None:
        c = self.callee
        keys = [k for k in value if isinstance(k, str)]
        if c is not None and keys and len(keys) == len(value) and set(keys) <= set(c.positional) | set(c.kwonly):
            fix = None
            if set(keys) == set(c.positional) and not c.varargs:
                fix = f"in_axes={axes_text(tuple(value[p] for p in c.positional))}"
            self.emit(
                node,
                "AX003",
                f"in_axes is a dict of parameter names, {axes_text(value)}, but in_axes is matched to the positional"
                " arguments by position (a tuple), never by name; JAX raises TypeError 'vmap in_axes must be an int,"
                " None, or a tuple of entries corresponding to the positional arguments'",
                fix,
            )
            return
        self.emit(
            node,
            "AX002",
            f"in_axes is a dict, {axes_text(value)}, but the top level of in_axes must be an int, None or a tuple"
            " with one entry per positional argument; JAX raises TypeError",
            f"in_axes=({axes_text(value)},)" if c is not None and len(c.positional) == 1 else None,
        )

    # ------------------------------------------------------------- out_axes

    def check_out_axes(self) -> None:
        """AX002 (bad leaves) and AX004 (tuple arity) for out_axes."""
        site, c = self.site, self.callee
        value = site.option("out_axes")
        if is_default(value) or value is UNKNOWN:
            return
        node = _node_of(site, "out_axes")
        bad = [leaf for leaf in axis_leaves(value) if bad_axis(leaf)]
        if bad:
            self.emit(
                node,
                "AX002",
                f"out_axes holds {bad[0]!r} (of type {type(bad[0]).__name__}), but axes must be ints or None"
                f"{_bool_note(bad[0])}; JAX raises TypeError 'out_axes must be an int, None, or (nested) container"
                " with those types as leaves'",
                _leaf_fix(bad[0]),
            )
            return
        if c is None or c.out_arity is None or not isinstance(value, (tuple, list, dict)):
            return
        k = c.out_arity
        returns = f"{c.name} returns a tuple of {k}"
        if isinstance(value, tuple) and len(value) == k:
            return
        if (
            self.site.transform.kind == "vmap"
            and self.site.transform.native
            and len(value) == k
            and vmap_matches_containers_by_position()
        ):
            return  # jax.vmap from 0.12.1 matches a list or dict of k axes to the tuple by position
        fix: str | None = None
        if isinstance(value, dict):
            problem = f"out_axes is a dict but {returns}"
        elif isinstance(value, list):
            if self.site.transform.kind not in ("vmap", "pmap"):
                return  # verified against JAX for vmap and pmap only
            problem = f"out_axes is a list, {axes_text(value)}, but {returns} (lists and tuples differ)"
            fix = f"out_axes={axes_text(tuple(value))}" if len(value) == k else None
        else:
            problem = f"out_axes has {_plural(len(value), 'entry')} but {returns}"
            same = {repr(v) for v in value}
            if len(same) == 1 and value and value[0] is not UNKNOWN:
                fix = f"out_axes={axes_text(value[0])}"
            elif len(value) > k and UNKNOWN not in value[:k]:
                fix = f"out_axes={axes_text(tuple(value[:k]))} (one entry per output: the surplus entries dropped)"
        self.emit(
            node,
            "AX004",
            f"{problem}; out_axes must be a tree prefix of the output, and JAX raises"
            " 'out_axes specification must be a tree prefix of the corresponding value'",
            fix,
        )

    # ------------------------------------------------------------ signature=

    def check_signature(self) -> SigCore | None:
        """AX012 (unreadable), AX007 (inputs), AX008 (ranks vs annotations); returns the core."""
        site, c = self.site, self.callee
        if site.transform.lib != "axischeck" or "signature" not in site.options:
            return None
        node = site.options["signature"]
        value = site.module.value(node)
        if value is None or _has_unknown(value):
            return None
        try:
            core = parse_signature(value)
        except SignatureError as err:
            self.emit(
                node,
                "AX012",
                f"signature= {_short(node)} cannot be read, so axischeck raises SpecError when the transform is"
                f" built: {err}",
            )
            return None
        if core is None:
            return None
        if c is None or c.sites:
            return core
        names = [*c.positional, *sorted(set(c.kwonly) - set(c.positional))]
        if core.params is None and len(core.inputs) > len(names) and not c.varargs:
            self.emit(
                node,
                "AX007",
                f"the signature {core} declares {len(core.inputs)} inputs but {c.name} has only"
                f" {_plural(len(names), 'parameter')} ({', '.join(names) or 'none'}); axischeck raises SpecError",
            )
            return None
        if core.params is not None:
            unknown = [p for p in core.params if p not in names]
            if unknown and not c.varargs and not c.varkw:
                self.emit(
                    node,
                    "AX007",
                    f"the signature names {', '.join(map(repr, unknown))}, which {c.name} does not have"
                    f" (its parameters: {', '.join(names) or 'none'}); axischeck raises SpecError",
                )
                return None
        self._signature_vs_annotations(core, node)
        return core

    def _signature_vs_annotations(self, core: SigCore, node: ast.AST) -> None:
        c = self.callee
        assert c is not None and c.func is not None
        notes = c.func.params.annotations
        params = core.params or c.positional[: len(core.inputs)]
        for name, tree in zip(params, core.inputs, strict=False):
            declared = _leaf_rank(tuple(None if s.variadic_index is not None else s.min_rank for s in tree.leaves))
            annotated = _leaf_rank(_param_ranks(c, name))
            if declared is not None and annotated is not None and declared != annotated:
                self.emit(
                    node,
                    "AX008",
                    f"the signature gives {name} the per-example shape {tree} (rank {declared}), but its annotation"
                    f" {_short(notes.get(name))} has rank {annotated}; one of them is wrong (axischeck checks the"
                    " signature and ignores the annotations)",
                )
                return
        if core.output is not None and c.out_ranks is not None and not c.out_tuple:
            declared = _leaf_rank(
                tuple(None if s.variadic_index is not None else s.min_rank for s in core.output.leaves)
            )
            annotated = _leaf_rank(c.out_ranks)
            if declared is not None and annotated is not None and declared != annotated:
                self.emit(
                    node,
                    "AX008",
                    f"the signature declares the output {core.output} (rank {declared}), but the return annotation"
                    f" {_short(notes.get('return'))} has rank {annotated}",
                )

    # --------------------------------------------------------------- ranges

    def check_ranges(self, core: SigCore | None) -> None:
        """AX009: axes outside [-(r+1), r] for an argument (or output) of per-example rank r."""
        c = self.callee
        if c is None:
            return
        if core is None and c.out_ranks is None and all(r is None for r in c.in_ranks):
            return  # no rank is declared, so no axis can be out of range
        in_ranks: list[tuple[str, Ranks | None]]
        out_ranks: Ranks | None
        origin = "its annotation"
        if core is not None:
            names = core.params or c.positional[: len(core.inputs)]
            by_name = {n: _tree_ranks(t.leaves) for n, t in zip(names, core.inputs, strict=False)}
            in_ranks = [(p, by_name.get(p)) for p in c.positional]
            out_ranks = _tree_ranks(core.output.leaves) if core.output is not None else None
            out_tuple = core.output is not None and isinstance(core.output.value, tuple)
            origin = "signature="
        else:
            in_ranks = list(zip(c.positional, c.in_ranks, strict=True))
            out_ranks, out_tuple = c.out_ranks, c.out_tuple
            if c.sites:
                origin = "its annotation and the inner transforms"
        value = self.in_axes()
        if value is not UNKNOWN and not isinstance(value, dict):
            for i, (name, ranks) in enumerate(in_ranks):
                axis = value[i] if isinstance(value, (tuple, list)) and i < len(value) else value
                if isinstance(value, (tuple, list)) and i >= len(value):
                    break
                if type(axis) is not int or ranks is None:
                    continue
                for r in ranks:
                    if r is not None and not -(r + 1) <= axis <= r:
                        self.emit(
                            _node_of(self.site, "in_axes"),
                            "AX009",
                            f"{f'in_axes={axis}' if type(value) is int else f'in_axes entry {i} ({axis})'} asks for"
                            f" axis {axis} of {name}, but {name} has per-example rank"
                            f" {r} (from {origin}), so its batched rank is {r + 1} and the axis must be in"
                            f" [{-(r + 1)}, {r}]; JAX raises 'vmap was requested to map its argument along axis"
                            f" {axis}, which implies that its rank should be at least {_needed(axis)}'",
                        )
                        return
        out = self.site.option("out_axes")
        if is_default(out):
            out = 0
        if out_ranks is None or out is UNKNOWN:
            return
        pairs: list[tuple[str, Any, int | None]] = []
        if isinstance(out, (tuple, list)) and out_tuple and len(out) == len(out_ranks):
            pairs = [(f"output {i}", a, r) for i, (a, r) in enumerate(zip(out, out_ranks, strict=True))]
        elif type(out) is int and not out_tuple:
            pairs = [("the output", out, r) for r in out_ranks]
        for what, axis, r in pairs:
            if type(axis) is int and r is not None and not -(r + 1) <= axis <= r:
                self.emit(
                    _node_of(self.site, "out_axes"),
                    "AX009",
                    f"out_axes={axis} puts the mapped axis at position {axis} of {what}, which has per-example rank"
                    f" {r} (from {origin}); the batched output has rank {r + 1}, so out_axes must be in"
                    f" [{-(r + 1)}, {r}], and JAX raises 'axis {axis} is out of bounds for array of dimension"
                    f" {r + 1}'",
                )
                return

    # -------------------------------------------------------------- call sites

    def result_uses(self) -> list[Use]:
        """Where the transformed function goes (its calls, other transforms, or unknown)."""
        if self._uses is None:
            site = self.site
            if site.decorated is not None:
                fn = site.decorated
                if any(
                    self.resolver.match(d, fn.module, fn.outer) is not None
                    for d in fn.decorators[: site.decorator_index]
                ):
                    self._uses = [Use("unknown", site.node, site.module)]  # another transform above
                else:
                    self._uses = uses_of_def(self.resolver, fn)
            else:
                self._uses = uses_of_value(self.resolver, site.module, site.node)
        return self._uses

    def signature_calls(self) -> Iterator[tuple[Use, ast.Call]]:
        """The visible calls of the transformed function that its own signature answers
        (not a grad's of it), each with its call."""
        for use in self.result_uses():
            if use.kind == "call" and use.keeps_signature and isinstance(use.node, ast.Call):
                yield use, use.node

    def _may_pass_by_keyword(self) -> bool:
        """Not every call is visible, or one passes keyword arguments: the parameters without an
        in_axes entry may be keywords (JAX maps those over axis 0)."""
        uses = self.result_uses()
        return not uses or any(
            u.kind != "call" or not isinstance(u.node, ast.Call) or bool(u.arguments()[1]) for u in uses
        )

    def check_calls(self) -> None:
        """AX001 / AX003 at the calls of the transformed function that the file shows."""
        entries = self.in_axes()
        c = self.callee
        if self.site.transform.kind == "pmap" and self.site.has("static_broadcasted_argnums"):
            self._static_calls()
            return
        if not isinstance(entries, (tuple, list)) or not self.site.readable:
            return
        if self.site.transform.kind == "pmap" and isinstance(entries, list):
            return
        n = len(entries)
        for use, call in self.signature_calls():
            if not use.spelled_out():
                continue
            args, keywords = use.arguments()
            got = len(args) + use.implicit
            if expects_failure(use.module, call):
                continue
            keyed = [
                (k.arg, c.positional.index(k.arg))
                for k in keywords
                if c is not None and k.arg in c.positional and c.positional.index(k.arg) < n
            ]
            if keyed and got < n:
                name, i = keyed[0]
                i_written = i - use.implicit
                self.report(
                    use.module,
                    call,
                    "AX003",
                    f"{self.what}: {name} is passed by keyword, but in_axes gives it entry {i}"
                    f" ({axes_text(entries[i])}); in_axes covers only positional arguments (JAX maps keyword"
                    f" arguments over axis 0), so JAX sees {_plural(got, 'positional argument')} for {n} in_axes"
                    f" entries and raises {self._len_error(n, got)}",
                    f"pass {name} by position (argument {i_written + 1})"
                    if i == got and len(keyed) == 1 and not use.bound
                    else None,
                )
            elif got != n:
                self.report(
                    use.module,
                    call,
                    "AX001",
                    f"{self.what} is called with {_plural(got, 'positional argument')} but in_axes has"
                    f" {n} {'entry' if n == 1 else 'entries'}; a tuple in_axes needs one entry per positional"
                    f" argument, and JAX raises {self._len_error(n, got)}",
                    None,
                )

    def _static_calls(self) -> None:
        """A call of a pmap with static arguments that passes fewer positional arguments than
        the last static position: JAX raises before anything else ("pmapped function has
        static_broadcasted_argnums=(1,) but was called with only 1 positional argument")."""
        static, c = self.static_argnums(), self.callee
        if static is None or not self.site.readable:
            return
        last = max(static)
        for use, call in self.signature_calls():
            if not use.spelled_out():
                continue
            args, keywords = use.arguments()
            got = len(args) + use.implicit
            if got > last or expects_failure(use.module, call):
                continue
            wanted = c.positional[last] if c is not None and last < len(c.positional) else None
            by_keyword = wanted is not None and any(k.arg == wanted for k in keywords)
            self.report(
                use.module,
                call,
                "AX003" if by_keyword else "AX001",
                f"{self.what}: static_broadcasted_argnums={axes_text(static)} counts positional arguments, but the"
                f" call passes {_plural(got, 'positional argument')}"
                + (f" ({wanted} by keyword, which pmap maps over the devices instead)" if by_keyword else "")
                + f"; JAX raises ValueError 'pmapped function has static_broadcasted_argnums={axes_text(static)} but"
                f" was called with only {got} positional argument{'s' if got != 1 else ''}'",
                f"pass {wanted} by position (argument {last + 1})"
                if by_keyword and got == last and not use.bound
                else None,
            )

    # --------------------------------------------------------------- shard_map

    def check_specs(self) -> None:
        """AX010 (in_specs count), AX011 (spec longer than the rank), AX004 (out_specs arity)."""
        site, c = self.site, self.callee
        if c is None or not site.readable:
            return
        in_specs = site.options.get("in_specs")
        if isinstance(in_specs, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in in_specs.elts):
            n, p, r = len(in_specs.elts), len(c.positional), c.required
            if (n > p and not c.varargs) or n < r:
                self.emit(
                    in_specs,
                    "AX010",
                    f"in_specs has {_plural(n, 'entry')} but {c.name} takes"
                    f" {_plural(p, 'positional parameter')} ({c.param_list()})"
                    + (f", {r} of them required" if r != p else "")
                    + "; shard_map matches in_specs to the positional arguments (it takes no keyword arguments),"
                    " and JAX raises 'pytree structure error: different lengths of tuple'",
                )
                return
            for i, (spec, ranks) in enumerate(zip(in_specs.elts, c.in_ranks, strict=False)):
                if self._spec_too_long(spec, ranks, f"in_specs entry {i} for {c.positional[i]}", c.positional[i]):
                    return
        elif in_specs is not None and self._spec_entries(in_specs) is not None:
            for name, ranks in zip(c.positional, c.in_ranks, strict=True):
                if self._spec_too_long(in_specs, ranks, f"in_specs (for every argument, so for {name})", name):
                    return
        out_specs = site.options.get("out_specs")
        if out_specs is None:
            return
        if isinstance(out_specs, ast.Tuple) and c.out_arity is not None:
            if not any(isinstance(e, ast.Starred) for e in out_specs.elts) and len(out_specs.elts) != c.out_arity:
                self.emit(
                    out_specs,
                    "AX004",
                    f"out_specs has {_plural(len(out_specs.elts), 'entry')} but {c.name} returns a tuple of"
                    f" {c.out_arity};"
                    " out_specs must be a tree prefix of the output, and JAX raises a pytree structure error",
                )
                return
        if c.out_ranks is not None and not c.out_tuple and self._spec_entries(out_specs) is not None:
            self._spec_too_long(out_specs, c.out_ranks, "out_specs", "the output")

    def _spec_entries(self, node: ast.expr) -> int | None:
        if not isinstance(node, ast.Call) or node.keywords:
            return None
        if any(isinstance(a, ast.Starred) or (isinstance(a, ast.Constant) and a.value is Ellipsis) for a in node.args):
            return None
        if qualname(node.func, self.site.module, self.site.scope) not in PARTITION_SPEC:
            return None
        return len(node.args)

    def _spec_too_long(self, spec: ast.expr, ranks: Ranks | None, what: str, name: str) -> bool:
        return self.spec_too_long(spec, ranks, what, name, "its annotation")

    def spec_too_long(self, spec: ast.expr, ranks: Ranks | None, what: str, name: str, origin: str) -> bool:
        """AX011 when `spec` partitions more dimensions than the rank (from `origin`)."""
        n = self._spec_entries(spec)
        r = _leaf_rank(ranks)
        if n is None or r is None or n <= r:
            return False
        jax_says = (
            "JAX raises ValueError 'shard_map applied to the function ... was given an in_specs entry which is too"
            " long to be compatible with the corresponding input value'"
            if what.startswith("in_specs")
            else "JAX raises ValueError 'shard_map applied to the function ... was given an out_specs entry which is"
            " too long to be compatible with the corresponding output value'"
        )
        self.emit(
            spec,
            "AX011",
            f"{what} is {_short(spec)}, which partitions {_plural(n, 'dimension')}, but {name} has rank {r} (from"
            f" {origin}); a PartitionSpec may be at most as long as the rank, and {jax_says}",
        )
        return True


def _len_error(n_axes: int, n_args: int, kind: str = "vmap") -> str:
    if kind == "pmap":
        return "'pytree structure error: different lengths of tuple' (in_axes against the arguments)"
    return (
        "'vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional arguments"
        f" passed to the function, but got len(in_axes)={n_axes}, len(args)={n_args}'"
    )


def _takes(c: Callee) -> str:
    """`f takes 2 positional parameters (x, y)`, for the messages about in_axes' length."""
    return f"{c.name} takes {_plural(len(c.positional), 'positional parameter')} ({c.param_list()})"


def _needed(axis: int) -> int:
    return axis + 1 if axis >= 0 else -axis


def _leaf_rank(ranks: Ranks | None) -> int | None:
    if ranks is None or len(ranks) != 1:
        return None
    return ranks[0]


def _tree_ranks(leaves: Any) -> Ranks:
    return tuple(None if s.variadic_index is not None else s.min_rank for s in leaves)


def _param_ranks(c: Callee, name: str) -> Ranks | None:
    if name in c.positional:
        return c.in_ranks[c.positional.index(name)]
    return c.kw_ranks.get(name)


def _has_unknown(value: Any) -> bool:
    if value is UNKNOWN:
        return True
    if isinstance(value, (tuple, list)):
        return any(_has_unknown(v) for v in value)
    if isinstance(value, dict):
        return any(_has_unknown(v) for v in value.values())
    return False


def _leaf_fix(leaf: object) -> str | None:
    if isinstance(leaf, float) and leaf.is_integer():
        return f"write {int(leaf)} instead of {leaf!r}"
    if isinstance(leaf, str) and leaf.lstrip("-").isdigit():
        return f"write {int(leaf)} instead of {leaf!r}"
    return None


_PYTREE_METHODS = frozenset({"tree_flatten", "tree_unflatten", "tree_flatten_with_keys", "__init_subclass__"})


def _maybe_pytree(cls: ast.ClassDef, module: ModuleInfo) -> bool:
    """Whether a class may be a pytree for all the file says: it defines a pytree's methods
    (or registers its subclasses), the file registers anything (`register_pytree_node`,
    in a loop or by keyword), imports a pytree helper, or hands the class itself to a call
    (a helper that registers it). Registration in another file is not seen: the rule
    stays quiet wherever the file gives a hint of one."""
    if any(isinstance(n, ast.FunctionDef) and n.name in _PYTREE_METHODS for n in cls.body):
        return True
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            passed = [*node.args, *(k.value for k in node.keywords)]
            if "register" in callee.lower() or any(isinstance(a, ast.Name) and a.id == cls.name for a in passed):
                return True  # a registration (in a loop, by keyword), or the class handed to a helper
        elif isinstance(node, ast.ImportFrom | ast.Import) and any("pytree" in a.name.lower() for a in node.names):
            return True  # a registering function imported under another name
    return False

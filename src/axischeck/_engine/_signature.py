"""`Signature`: the public value for a per-example shape signature and its algebra."""

from __future__ import annotations

import keyword
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import jax

from .._core._axes import check_axis_name, check_axis_size, freeze_in_axes, freeze_out_axes
from .._core._dims import ANY, ArraySpec, Named, Variadic, parse_signature_text
from .._core._errors import ArgumentError, SpecError
from .._core._explain import tables_unread
from .._core._leaves import flatten_call, label_call, shapes_as_structs
from .._core._prediction import Prediction
from .._core._spec import SigCore, SpecTree, Verbatim, core_from_value, spec_tree
from .._core._steps import MapStep
from .._core._text import short_repr
from ._levels import MapLevel
from ._models import MapModel, Model, SignatureModel, run
from ._unify import Bindings, Conflict

_MISSING: Any = object()


def fresh_symbol(taken: frozenset[str] | set[str], axis_name: Hashable | None) -> str:
    """The batch symbol for a new level: the axis name if it is a str, else B, B2, ..."""
    if isinstance(axis_name, str):
        return axis_name
    n = 1
    while (name := "B" if n == 1 else f"B{n}") in taken:
        n += 1
    return name


_LEAF = jax.tree_util.tree_structure(0)


def _batch_axis(spec: ArraySpec, over: str, what: str) -> int | None:
    """Where `over` sits in `spec`, counted so it stays right whatever a variadic holds."""
    hits = [i for i, d in enumerate(spec.dims) if isinstance(d, Named) and d.name == over]
    if not hits:
        return None
    if len(hits) > 1:
        raise SpecError(f"the batch dimension {over!r} appears {len(hits)} times in {what} {spec}")
    i = hits[0]
    v = spec.variadic_index
    return i if v is None or i < v else i - len(spec.dims)


def _without(spec: ArraySpec, over: str) -> ArraySpec:
    return ArraySpec(tuple(d for d in spec.dims if not (isinstance(d, Named) and d.name == over)))


class Signature:
    """A per-example shape signature, as a value.

    Accepted forms:

    - a NumPy gufunc string: `Signature("(a,b),(b,c)->(a,c)")` (`()` is a scalar,
      integers are fixed sizes, `->(a),(b)` declares two outputs);
    - the space form: `Signature("n f, f o -> n")`, with `*batch`, `...`, `_`, `#a`;
    - pytrees of dim strings: `Signature(({"W": "o i", "b": "o"}, "i"), output="o")`;
    - a dict of parameter names: `Signature({"x": "a b", "return": "a"})`.

    `sig.vmap(in_axes, out_axes)` returns the batched signature, so nested vmaps are
    composition:

    ```python
    >>> s = ax.Signature("(a,b),(b,c),(a,c)->(a,c)").vmap(in_axes=(0, 1, 0))
    >>> str(s)
    '(B, a, b), (b, B, c), (B, a, c) -> (B, a, c)'
    >>> s.predict((16, 8, 4), (4, 16, 2), (16, 8, 2)).shapes
    Shape(16, 8, 2)
    ```
    """

    __slots__ = ("_core", "_hash", "_inference", "_levels")

    _core: SigCore
    _levels: tuple[MapLevel, ...]
    _inference: Inference | None  # how infer_signature found it: not part of the value
    _hash: int | None  # computed at first use

    def __init__(self, spec: Any, output: Any = _MISSING) -> None:
        if isinstance(spec, Signature):
            if output is not _MISSING:
                raise SpecError("give output= only with a tuple or dict of input specs")
            core, levels = spec._core, spec._levels
        else:
            core, levels = core_from_value(spec, output, has_output=output is not _MISSING), ()
        object.__setattr__(self, "_core", core)
        object.__setattr__(self, "_levels", levels)
        object.__setattr__(self, "_inference", None)
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Signature is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Signature is immutable")

    # An immutable value: copies are the value itself; pickling rebuilds it from its
    # parts without going through `__setattr__` (which refuses every assignment).
    def __copy__(self) -> Signature:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Signature:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        if self._inference is not None:
            return (_rebuild, (self._core, self._levels, self._inference))
        return (_rebuild, (self._core, self._levels))

    @classmethod
    def _make(cls, core: SigCore, levels: tuple[MapLevel, ...] = (), inference: Inference | None = None) -> Signature:
        sig = cls.__new__(cls)
        object.__setattr__(sig, "_core", core)
        object.__setattr__(sig, "_levels", levels)
        object.__setattr__(sig, "_inference", inference)
        object.__setattr__(sig, "_hash", None)
        return sig

    # ------------------------------------------------------------------ views

    @property
    def core(self) -> SigCore:
        """The per-example inputs and output, before any `vmap`."""
        return self._core

    @property
    def levels(self) -> tuple[MapLevel, ...]:
        """The vmap levels applied so far, innermost first."""
        return self._levels

    @property
    def symbols(self) -> frozenset[str]:
        """Every dimension symbol, batch symbols included."""
        return self._core.symbols | {lvl.symbol for lvl in self._levels}

    @property
    def num_inputs(self) -> int:
        return len(self._core.inputs)

    # ---------------------------------------------------------------- algebra

    @classmethod
    def batched(cls, spec: str, over: str) -> Signature:
        """A signature of *batched* shapes, with the batch dimension named `over`.

        Where `over` sits in each input and output gives `in_axes` and `out_axes`, so the
        axes follow from the shapes you declare, even when sizes coincide (a checker that
        only compares sizes cannot tell `(n, b)` from `(b, n)` when n == b):

        ```python
        >>> s = ax.Signature.batched("(n,a,b),(b,n,c),(n,a,c)->(n,a,c)", over="n")
        >>> s.levels[0].in_axes.value, str(s.core)
        ((0, 1, 0), '(a, b), (b, c), (a, c) -> (a, c)')
        >>> def complex_operation(x, y, z):
        ...     return jnp.einsum("ab,bc->ac", x, y) + z
        >>> f = ax.vmap(complex_operation, signature=s)   # in_axes=(0, 1, 0) derived
        >>> f.in_axes
        (0, 1, 0)
        ```
        An input without `over` is unmapped (None); an output without it gets
        `out_axes=None`. `over` may appear at most once per array.
        """
        if not isinstance(over, str) or not over.isidentifier():
            raise SpecError(f"over= names the batch dimension, e.g. over='n'; got {short_repr(over)}")
        ins, outs = parse_signature_text(spec) if isinstance(spec, str) else (None, None)
        if ins is None:
            raise SpecError("Signature.batched takes a signature string like '(n,a,b),(b,n,c)->(n,a,c)'")
        in_axes = tuple(_batch_axis(s, over, f"input {i}") for i, s in enumerate(ins))
        out_list = [_batch_axis(s, over, f"output {i}") for i, s in enumerate(outs or ())]
        if over not in {d.name for s in ins for d in s.dims if isinstance(d, Named)}:
            raise SpecError(f"no input of {spec!r} has the batch dimension {over!r}")
        per_in = tuple(_without(s, over) for s in ins)
        core = SigCore(
            tuple(SpecTree(_LEAF, (s,)) for s in per_in),
            None
            if outs is None
            else spec_tree(
                _without(outs[0], over) if len(outs) == 1 else tuple(_without(s, over) for s in outs), "the output"
            ),
        )
        out_axes: Any = 0 if outs is None else (out_list[0] if len(out_list) == 1 else tuple(out_list))
        level = MapLevel(freeze_in_axes(in_axes), freeze_out_axes(out_axes), fn_name="", symbol=over)
        return cls._make(core, (level,))

    def vmap(
        self,
        in_axes: Any = 0,
        out_axes: Any = 0,
        *,
        axis_size: int | None = None,
        axis_name: Hashable | None = None,
    ) -> Signature:
        """The signature of `jax.vmap(f, in_axes, out_axes, ...)` where `f` has this one.

        ```python
        >>> str(ax.Signature("(n),(n)->()").vmap(in_axes=(0, None)))
        '(B, n), (n) -> (B)'
        ```
        """
        check_axis_name(axis_name)
        level = MapLevel(
            freeze_in_axes(in_axes),
            freeze_out_axes(out_axes),
            check_axis_size(axis_size),
            axis_name,
            fn_name="",
            symbol=fresh_symbol(self.symbols, axis_name)
            if not (isinstance(axis_name, str) and axis_name in {lvl.symbol for lvl in self._levels})
            else fresh_symbol(self.symbols, None),
        )
        return Signature._make(self._core, self._levels + (level,))

    def model(self, *, inputs_only: bool = False) -> Model:
        """The prediction model: the signature, wrapped by each vmap level."""
        model: Model = SignatureModel(self._core, inputs_only=inputs_only)
        for level in self._levels:
            model = MapModel(level, model)
        return model

    def labelled(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The arguments as the engine reads them (shape tuples as structs), each labelled
        with the parameter name the signature gives it."""
        flatten_call(args, kwargs)  # reports unflattenable arguments as ArgumentError
        args, kwargs = shapes_as_structs(args, kwargs)
        params = list(self._core.params or ())
        return label_call(tuple(args), kwargs, (params, None, set(params)) if params else None)

    # ------------------------------------------------------------- concrete use

    def predict(self, *args: Any, **kwargs: Any) -> Prediction:
        """Predict output shapes for concrete arguments (arrays, structs, shape tuples).

        ```python
        >>> ax.Signature("(a,b),(b,c)->(a,c)").predict((8, 4), (4, 2)).shapes
        Shape(8, 2)
        ```
        """
        outcome = run(self.model(), self.labelled(args, kwargs))
        maps = [s for s in outcome.steps if isinstance(s, MapStep)]
        return Prediction(outcome.shapes, maps[0].axis_size if maps else None, outcome.steps)

    def unify(self, *args: Any, **kwargs: Any) -> Bindings | Conflict:
        """Bind every symbol (batch symbols too) to concrete argument shapes.

        Returns `Bindings`, or the first `Conflict` (the symbol, the places that
        disagree with their sizes). Outputs are not considered.

        ```python
        >>> sig = ax.Signature("(a,b),(b,c)->(a,c)")
        >>> sig.unify((8, 4), (4, 2)).sizes
        {'a': 8, 'b': 4, 'c': 2}
        >>> sig.unify((8, 4), (5, 2)).symbol
        'b'
        ```
        """
        try:
            with tables_unread():  # a Conflict carries no table: the first one ends the run
                outcome = run(self.model(inputs_only=True), self.labelled(args, kwargs))
        except ArgumentError as err:
            return Conflict(err.problem, err.symbol, err.places)
        sizes: dict[str, int | tuple[int, ...]] = dict(outcome.bindings.sizes)
        places = dict(outcome.bindings.places)
        for step in outcome.steps:
            if isinstance(step, MapStep) and step.axis_size is not None:
                sizes[step.symbol] = step.axis_size
        return Bindings(sizes, places)

    # ------------------------------------------------------------------ as code

    @property
    def notes(self) -> tuple[str, ...]:
        """What `f.infer_signature(...)` could not settle (empty for a written signature).

        Notes are not part of the value: two signatures that differ only in notes are
        equal and hash alike.

        ```python
        >>> ax.Signature("(a,b),(b,c)->(a,c)").notes
        ()
        ```
        """
        return self._inference.notes if self._inference is not None else ()

    def as_code(self, style: str = "signature", *, name: str | None = None) -> str:
        """This signature as text to paste into code.

        - `"signature"`: what to pass as `signature=` (the gufunc string, or the pytree
          form when a parameter or the output is a pytree);
        - `"annotated"`: a `def` line with `Annotated[jax.Array, "a b"]` annotations;
        - `"jaxtyping"`: a `def` line with jaxtyping's `Float[Array, "a b"]` (the dtype
          kind comes from the example arguments of `infer_signature`; `Shaped` when it
          is not known). jaxtyping cannot give each leaf of a dict its own dims, so a
          pytree parameter is written `Annotated[dict, {...}]`, which axischeck reads too.

        `name` names the function in the `def` line (default: the inferred function's
        name, else `f`); parameters are named as the function names them, else `x0, x1, ...`.

        ```python
        >>> sig = ax.Signature("(a,b),(b,c)->(a,c)")
        >>> print(sig.as_code())
        "(a,b),(b,c)->(a,c)"
        >>> print(sig.as_code("annotated", name="matmul"))
        def matmul(x0: Annotated[jax.Array, "a b"], x1: Annotated[jax.Array, "b c"]) -> Annotated[jax.Array, "a c"]: ...
        >>> print(ax.Signature(({"W": "o i", "b": "o"}, "i"), output="o").as_code())
        ax.Signature(({"W": "o i", "b": "o"}, "i"), output="o")
        ```
        """
        if style not in _STYLES:
            raise SpecError(f"as_code style must be one of {', '.join(map(repr, _STYLES))}, got {short_repr(style)}")
        if name is not None and not (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)):
            raise SpecError(f"as_code name must be a Python identifier, got {short_repr(name)}")
        if self._levels:
            raise SpecError(
                f"as_code writes per-example signatures, and {self} has vmap levels",
                hint="write the per-example signature and give the axes to the transform",
            )
        if style == "signature":
            return _signature_code(self._core)
        return _def_code(self._core, style, name, self._inference)

    # ---------------------------------------------------------------- display

    def __str__(self) -> str:
        return _render(self._core, self._levels)

    def __repr__(self) -> str:
        return f"Signature({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Signature) and (self._core, self._levels) == (other._core, other._levels)

    def __hash__(self) -> int:
        # Computed once: a signature is immutable, and transforms key their shared
        # predictor on it at every construction (the walk over its dims is the cost).
        cached: int | None = self._hash
        if cached is None:
            cached = hash((self._core, self._levels))
            object.__setattr__(self, "_hash", cached)
        return cached


Signature.__module__ = "axischeck"


def _rebuild(core: SigCore, levels: tuple[MapLevel, ...], inference: Inference | None = None) -> Signature:
    """Unpickle a `Signature` (see `Signature.__reduce__`)."""
    return Signature._make(core, levels, inference)


def _insert(
    dims: list[str] | None, spec_dims: tuple[Any, ...] | None, axis: Any, symbol: str
) -> tuple[list[str] | None, tuple[Any, ...] | None]:
    """Insert `symbol` where `axis` puts the batch dim, if the position is certain."""
    if dims is None or spec_dims is None or not (axis is None or type(axis) is int):
        return None, None
    if axis is None:
        return dims, spec_dims
    v = next((i for i, d in enumerate(spec_dims) if isinstance(d, Variadic)), None)
    n = len(spec_dims)
    if v is None:
        if not -(n + 1) <= axis <= n:
            return None, None
        c = axis if axis >= 0 else n + 1 + axis
    elif axis >= 0 and axis <= v:
        c = axis
    elif axis < 0 and -axis - 1 <= n - v - 1:
        c = n + 1 + axis
    else:
        return None, None
    return dims[:c] + [symbol] + dims[c:], spec_dims[:c] + (Named(symbol),) + spec_dims[c:]


def _render(core: SigCore, levels: tuple[MapLevel, ...]) -> str:
    """Fold the levels into the dims where every position is certain; else show them."""
    if not levels:
        return str(core)
    ok = all(t.is_leaf for t in core.inputs) and (
        core.output is None or core.output.is_leaf or _flat_tuple(core.output)
    )
    if ok:
        ins: list[tuple[list[str] | None, tuple[Any, ...] | None]] = [
            ([str(d) for d in t.leaves[0].dims], t.leaves[0].dims) for t in core.inputs
        ]
        outs: list[tuple[list[str] | None, tuple[Any, ...] | None]] = (
            [([str(d) for d in s.dims], s.dims) for s in core.output.leaves] if core.output is not None else []
        )
        for level in levels:
            ia = level.in_axes.value
            if isinstance(ia, tuple):
                if len(ia) != len(ins):
                    ok = False
                    break
                ins = [_insert(d, sd, a, level.symbol) for (d, sd), a in zip(ins, ia, strict=True)]
            else:
                ins = [_insert(d, sd, ia, level.symbol) for d, sd in ins]
            oa = level.out_axes.value
            if isinstance(oa, tuple) and core.output is not None and not core.output.is_leaf and len(oa) == len(outs):
                outs = [_insert(d, sd, a, level.symbol) for (d, sd), a in zip(outs, oa, strict=True)]
            elif oa is None or type(oa) is int:
                outs = [_insert(d, sd, oa, level.symbol) for d, sd in outs]
            else:
                ok = False
                break
        if ok and all(d is not None for d, _ in ins + outs):
            text = ", ".join("(" + ", ".join(d or []) + ")" for d, _ in ins)
            if core.output is not None:
                text += " -> " + ", ".join("(" + ", ".join(d or []) + ")" for d, _ in outs)
            return text
    text = str(core)
    for level in levels:
        text = f"vmap[{level.symbol}](in_axes={level.in_axes}, out_axes={level.out_axes}) of {{{text}}}"
    return text


def _flat_tuple(tree: Any) -> bool:
    value = tree.value
    return type(value) is tuple and all(isinstance(v, ArraySpec) for v in value)


@dataclass(frozen=True, slots=True)
class Inference:
    """How `infer_signature` found a signature: what it could not settle, and what
    `Signature.as_code` needs to write it (the function's name, its parameter names, the
    examples' dtype kinds). Carried beside the value, never part of it."""

    notes: tuple[str, ...] = ()
    name: str = "f"
    params: tuple[str, ...] | None = None
    kinds: tuple[tuple[str, ...], ...] = ()  # per input, per leaf: "Float", "Int", ..., "Shaped"
    out_kinds: tuple[str, ...] = ()  # per output leaf


_STYLES = ("signature", "annotated", "jaxtyping")


def _py_str(text: str) -> str:
    """A Python string literal, double-quoted where that needs no escapes (dims never do)."""
    if '"' in text or "\\" in text or not text.isprintable():
        return repr(text)
    return f'"{text}"'


def _space(spec: ArraySpec) -> str:
    return " ".join(str(d) for d in spec.dims)


def _gufunc(spec: ArraySpec) -> str:
    return "(" + ",".join(str(d) for d in spec.dims) + ")"


def _node_code(node: Any) -> str:
    """A spec pytree (leaves already `Verbatim`) as Python source."""
    if isinstance(node, Verbatim):
        return node.text
    if node is None:
        return "None"
    kind = type(node)
    if kind is dict:
        return "{" + ", ".join(f"{_key_code(k)}: {_node_code(v)}" for k, v in node.items()) + "}"
    if kind is tuple:
        inner = ", ".join(_node_code(v) for v in node)
        return f"({inner},)" if len(node) == 1 else f"({inner})"
    if kind is list:
        return "[" + ", ".join(_node_code(v) for v in node) + "]"
    fields = getattr(node, "_fields", None)
    if isinstance(node, tuple) and isinstance(fields, tuple):  # a NamedTuple: its own constructor
        return f"{kind.__name__}(" + ", ".join(f"{f}={_node_code(v)}" for f, v in zip(fields, node, strict=True)) + ")"
    return repr(node)  # another registered node: its own repr, with the dims written in it


def _key_code(key: Any) -> str:
    return _py_str(key) if isinstance(key, str) else repr(key)


def _tree_code(tree: SpecTree) -> str:
    codes = [Verbatim("None" if s == ANY else _py_str(_space(s))) for s in tree.leaves]
    try:
        return _node_code(jax.tree_util.tree_unflatten(tree.treedef, codes))
    except Exception:  # a node type that refuses these leaves: its structure as text
        return str(tree)


def _leafy(core: SigCore) -> bool:
    """Whether the gufunc string can say it: every input one array, the output one array
    or a tuple of two or more (a 1-tuple would read back as a single array)."""
    out = core.output
    return all(t.is_leaf for t in core.inputs) and (
        out is None or out.is_leaf or (_flat_tuple(out) and len(out.leaves) >= 2)
    )


def _signature_code(core: SigCore) -> str:
    if core.params is None and _leafy(core):
        text = ",".join(_gufunc(t.leaves[0]) for t in core.inputs)
        if core.output is not None:
            text += "->" + ",".join(_gufunc(s) for s in core.output.leaves)
        return _py_str(text)
    if core.params is not None:
        entries = [f"{_py_str(p)}: {_tree_code(t)}" for p, t in zip(core.params, core.inputs, strict=True)]
        if core.output is not None:
            entries.append(f'"return": {_tree_code(core.output)}')
        return "{" + ", ".join(entries) + "}"
    inputs = ", ".join(_tree_code(t) for t in core.inputs)
    inputs = f"({inputs},)" if len(core.inputs) == 1 else f"({inputs})"
    output = f", output={_tree_code(core.output)}" if core.output is not None else ""
    return f"ax.Signature({inputs}{output})"


def _array_hint(spec: ArraySpec, style: str, kind: str) -> str:
    if style == "jaxtyping":
        return f"{kind}[Array, {_py_str(_space(spec))}]"
    return f"Annotated[jax.Array, {_py_str(_space(spec))}]"


def _node_type(value: Any) -> str:
    kind = type(value)
    return kind.__name__ if kind in (dict, tuple, list) or hasattr(value, "_fields") else "Any"


def _def_code(core: SigCore, style: str, name: str | None, inference: Inference | None) -> str:
    """`def name(x: <hint>, ...) -> <hint>: ...` for the annotated and jaxtyping styles."""
    info = inference or Inference()
    params = core.params or info.params
    if params is None or len(params) < len(core.inputs):
        params = tuple(f"x{i}" for i in range(len(core.inputs)))
    kinds = info.kinds if len(info.kinds) == len(core.inputs) else ((),) * len(core.inputs)
    parts = []
    for param, tree, leaf_kinds in zip(params, core.inputs, kinds, strict=False):
        if tree.is_leaf and tree.leaves[0] == ANY:
            parts.append(param)  # unchecked: no annotation
        elif tree.is_leaf:
            parts.append(f"{param}: {_array_hint(tree.leaves[0], style, (leaf_kinds or ('Shaped',))[0])}")
        else:
            parts.append(f"{param}: Annotated[{_node_type(tree.value)}, {_tree_code(tree)}]")
    returns = ""
    out = core.output
    if out is not None:
        out_kinds = info.out_kinds if len(info.out_kinds) == len(out.leaves) else ("Shaped",) * len(out.leaves)
        if out.is_leaf:
            returns = f" -> {_array_hint(out.leaves[0], style, out_kinds[0])}"
        elif _flat_tuple(out) and out.leaves:
            hints = ", ".join(_array_hint(s, style, k) for s, k in zip(out.leaves, out_kinds, strict=True))
            returns = f" -> tuple[{hints}]"
        else:
            returns = f" -> Annotated[{_node_type(out.value)}, {_tree_code(out)}]"
    fn = name or (info.name if info.name.isidentifier() and not keyword.iskeyword(info.name) else "f")
    return f"def {fn}({', '.join(parts)}){returns}: ..."


SignatureLike = str | Signature | tuple[Any, ...] | list[Any] | dict[str, Any]
"""What `signature=` takes: a `Signature`, or anything `Signature(...)` parses."""


_PARSED: dict[str, Signature] = {}


def parsed_signature(signature: SignatureLike | None) -> Signature | None:
    """The parsed signature. Signatures written as text are parsed once per text (a
    `Signature` is immutable, so one is shared by every transform that writes it): inline
    `ax.vmap(f, signature="...")` in a loop costs no parse after the first."""
    if signature is None or isinstance(signature, Signature):
        return signature
    if type(signature) is not str:
        return Signature(signature)
    parsed = _PARSED.get(signature)
    if parsed is None:
        parsed = Signature(signature)
        if len(_PARSED) < 1024 and len(signature) < 4096:
            _PARSED[signature] = parsed
    return parsed

"""`axischeck.shard_map`: `jax.shard_map` with a per-device signature, prediction and checks."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Set
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, ParamSpec, TypeVar, overload

import jax
import numpy as np
from jax.sharding import AbstractMesh, Mesh, PartitionSpec

from ._core._errors import AxisCheckError, SpecError
from ._core._jax_compat import INFER_SPECS, JAX_SHARD_MAP, traceback_boundary
from ._core._leaves import array_shape, shapes_as_structs
from ._core._prediction import Prediction, ShardPrediction
from ._core._steps import ShardStep
from ._core._text import short_repr
from ._core._trees import PrefixMismatch, broadcast_prefix, check_nesting
from ._draws import DrawMap, shard_draw_map
from ._engine._function import fn_name
from ._engine._mesh import MeshShape, mesh_shape
from ._engine._models import Outcome
from ._engine._predictor import FIX_TRACES, Predictor
from ._engine._shard_model import ShardModel, ShardOptions, is_spec_leaf
from ._engine._signature import Signature, SignatureLike
from ._engine._transform_models import Models, shard_models
from ._options import Options, refusing_misspelled_options
from ._switch import checks_off, unchecked
from ._transform import Transformed

P = ParamSpec("P")
R = TypeVar("R")


def _check_specs(specs: Any, what: str, *, none_ok: bool) -> None:
    """Every leaf a PartitionSpec (or None where JAX allows it), found at decoration."""
    if specs is None and none_ok:
        return
    for leaf in jax.tree_util.tree_leaves(specs, is_leaf=is_spec_leaf):
        if not (isinstance(leaf, PartitionSpec) or (leaf is None and none_ok)):
            hint = f" (write P({leaf!r}))" if isinstance(leaf, str) else ""
            raise SpecError(
                f"shard_map {what} must be a pytree of jax.sharding.PartitionSpec, got {short_repr(leaf)}{hint}"
            )


def _axis_names(value: Any, mesh: MeshShape | None) -> frozenset[str]:
    if not isinstance(value, (set, frozenset)) or not all(isinstance(n, str) for n in value):  # as JAX
        raise SpecError(f"shard_map axis_names must be a set or frozenset of mesh axis names, got {short_repr(value)}")
    names = frozenset(value)
    if mesh is not None and not names <= set(mesh.names):
        raise SpecError(f"shard_map axis_names {set(names)} are not all axes of the mesh {mesh}")
    return names


@dataclass(frozen=True, slots=True)
class Settled:
    """What shard_map's (or smap's) options were validated into: the engine's options
    (named after no function: each model names them after its own), and two facts a
    call reads."""

    options: ShardOptions
    has_static: bool  # some in_specs entry is None: that argument is passed whole
    for_prediction_only: bool  # the mesh was given as {name: size}


def _specs_key(specs: Any) -> Hashable:
    """Specs as a key: as they are for the common forms (a `PartitionSpec`, a flat tuple
    of them and None), else their tree structure and each leaf with its type (equal specs
    in containers of different types, or in containers whose `__eq__` says equal whatever
    they hold, differ there); `_NO_KEY` when they cannot be flattened."""
    if _flat_specs(specs):
        return specs  # type: ignore[no-any-return]
    try:
        leaves, treedef = jax.tree_util.tree_flatten(specs, is_leaf=is_spec_leaf)
    except Exception:
        return _NO_KEY
    return (treedef, tuple((type(leaf), leaf) for leaf in leaves))


def _flat_specs(specs: Any) -> bool:
    """Whether specs are a `PartitionSpec`, None, or a flat tuple of them (nothing to walk)."""
    kind = type(specs)
    return kind is PartitionSpec or specs is None or (kind is tuple and _FLAT_SPEC_TYPES.issuperset(map(type, specs)))


_NO_KEY: Hashable = object()
"""`_specs_key` for specs that cannot be flattened: the options are then not keyed."""
_KEYED_FLAGS = frozenset({bool, int, np.bool_})
_NO_NAMES: frozenset[Any] = frozenset()
_FLAT_SPEC_TYPES = frozenset({PartitionSpec, type(None)})


def _settle(mesh: Any, in_specs: Any, out_specs: Any, axis_names: Any, check_vma: Any) -> Settled:
    shape = mesh_shape(mesh, "shard_map mesh") if mesh is not None else None
    names = _axis_names(axis_names, shape)
    if in_specs is not INFER_SPECS:
        _check_specs(in_specs, "in_specs", none_ok=True)
    _check_specs(out_specs, "out_specs", none_ok=True)  # None only fits an output of None
    has_static = in_specs is not INFER_SPECS and any(
        s is None for s in jax.tree_util.tree_leaves(in_specs, is_leaf=is_spec_leaf)
    )
    for_prediction_only = shape is not None and not isinstance(mesh, (Mesh, AbstractMesh))  # a dict
    jax_mesh = mesh if isinstance(mesh, (Mesh, AbstractMesh)) else shape.abstract() if shape is not None else None
    try:
        vma = bool(check_vma)  # JAX takes anything with a truth value
    except Exception as err:
        raise SpecError(f"shard_map check_vma must be True or False, got {short_repr(check_vma)}") from err
    options = ShardOptions(shape, jax_mesh, in_specs, out_specs, names, vma, "")
    return Settled(options, has_static, for_prediction_only)


class ShardPredictor(Predictor):
    """A shard_map's predictions carry the per-device blocks and the mesh. Its fix search
    may run the function twice as often as a map's: a mesh of another shape is checked on
    the call and then, on arguments both meshes divide, against the mesh given (three
    runs), besides another mesh axis and a padding."""

    fix_traces = 2 * FIX_TRACES

    def prediction_of(self, outcome: Outcome, args: tuple[Any, ...]) -> Prediction:
        step = outcome.steps[0]
        assert isinstance(step, ShardStep)
        out_def = jax.tree_util.tree_structure(outcome.shapes)
        in_def = jax.tree_util.tree_structure(tuple(args))
        pred = ShardPrediction(
            outcome.shapes,
            outcome.steps,
            jax.tree_util.tree_unflatten(out_def, [r.block for r in step.outs]),
            jax.tree_util.tree_unflatten(in_def, [r.block for r in step.args]),
            dict(step.mesh),
        )
        pred.traced = outcome.traced
        return pred


@dataclass(frozen=True, slots=True)
class ShardMapOptions(Options[Settled]):
    """`jax.shard_map`'s options, as given (see `shard_map`): a transform's `options`, frozen.

    ```python
    >>> from jax.sharding import PartitionSpec as P
    >>> ax.shard_map(lambda a: a, mesh={"x": 4}, in_specs=P("x"), out_specs=P("x")).options.mesh
    {'x': 4}
    ```

    Validated into a `Settled`.
    """

    out_specs: Any
    in_specs: Any = INFER_SPECS
    mesh: Mesh | AbstractMesh | dict[str, int] | None = None
    axis_names: Set[str] = frozenset()
    check_vma: bool = True

    # A fact the key and the refusal of unflattenable specs both read: found once, when the
    # options are made.
    _flat: bool = field(init=False, repr=False, compare=False)
    """Whether in_specs and out_specs are PartitionSpecs, None or flat tuples of them."""

    kind: ClassVar[str] = "shard_map"
    predictor: ClassVar[type[Predictor]] = ShardPredictor

    def __post_init__(self) -> None:
        flat = _flat_specs(self.in_specs) and _flat_specs(self.out_specs)
        object.__setattr__(self, "_flat", flat)
        if not flat:
            for specs, what in ((self.in_specs, "in_specs"), (self.out_specs, "out_specs")):
                check_nesting(specs, f"shard_map {what}")  # jaxlib's flatten must never meet a cycle

    @property
    def may_hold_containers(self) -> bool:
        """Flat options hold no list or dict (see `Options.as_built`)."""
        return not self._flat

    def key(self) -> Hashable | None:
        """The options as a key (None when they cannot be one): every value with its type,
        a mesh by equality (a dict of sizes by its typed items), specs as they are when
        flat, else by their structure and typed leaves (see `_specs_key`), axis names
        typed, check_vma only if a bool or an int (another object's `__eq__` may say equal
        to anything). A plain tuple: meshes and specs hash and compare in C, cheaper than a
        key object whose comparison runs Python. One that cannot be hashed is a miss in
        every cache (see `_core._keys.lookup`)."""
        mesh, axis_names, check_vma = self.mesh, self.axis_names, self.check_vma
        in_specs, out_specs = self.in_specs, self.out_specs
        types = (type(mesh), type(in_specs), type(out_specs), type(axis_names), type(check_vma))
        if not self._flat:
            in_specs, out_specs = _specs_key(in_specs), _specs_key(out_specs)
            if in_specs is _NO_KEY or out_specs is _NO_KEY:
                return None
        if type(check_vma) not in _KEYED_FLAGS:
            return None
        mesh_key: Any = mesh
        if isinstance(mesh, dict):
            mesh_key = tuple((name, type(size), size) for name, size in mesh.items())
        names_key: Any = axis_names
        if isinstance(axis_names, (set, frozenset)):
            names_key = frozenset((type(name), name) for name in axis_names) if axis_names else _NO_NAMES
        return ("shard_map", types, (mesh_key, in_specs, out_specs, names_key, check_vma))

    def validate(self) -> Settled:
        return _settle(self.mesh, self.in_specs, self.out_specs, self.axis_names, self.check_vma)

    @staticmethod
    def models(
        meaning: Settled, fun: Callable[..., Any], held: Callable[..., Any], signature: Signature | None
    ) -> Models:
        return shard_models(fun, held, signature, meaning.options)

    def jax_transform(self, fun: Callable[..., Any]) -> Callable[..., Any]:
        mesh = self.mesh
        if isinstance(mesh, dict):  # sizes to plan for: JAX is given the abstract mesh of them
            mesh = mesh_shape(mesh, "shard_map mesh").abstract()
        if self.axis_names or self.check_vma is not True:  # as given: JAX validates and records them
            return JAX_SHARD_MAP(
                fun,
                mesh=mesh,
                in_specs=self.in_specs,
                out_specs=self.out_specs,
                axis_names=self.axis_names,
                check_vma=self.check_vma,
            )
        # JAX's defaults, left out of its call (which costs less without them)
        return JAX_SHARD_MAP(fun, mesh=mesh, in_specs=self.in_specs, out_specs=self.out_specs)


class ShardMapped(Transformed[P, R]):
    """A function wrapped by `axischeck.shard_map` (see `shard_map`).

    ```python
    >>> from jax.sharding import PartitionSpec as P
    >>> f = ax.shard_map(lambda a: a * 2, mesh={"x": 4}, in_specs=P("x"), out_specs=P("x"))
    >>> f.predict((16, 3)).block_shapes, f.predict_with_mesh({"x": 16}, (16, 3)).block_shapes
    (Shape(4, 3), Shape(1, 3))
    ```
    """

    def __init__(self, f: Callable[P, R], options: Options[Settled], signature: SignatureLike | None) -> None:
        super().__init__(f, options, signature)
        self._settled: Settled = self._meaning

    def _remake(self) -> tuple[Callable[..., Any], dict[str, Any]]:
        return shard_map, {**self.options.as_kwargs(), "signature": self._declared}

    @property
    def shard_options(self) -> ShardOptions:
        """The options as the engine reads them (the mesh's sizes, the specs, the manual
        axis names), named after the function."""
        return replace(self._settled.options, name=fn_name(self.__wrapped__))

    def _describe(self) -> str:
        return self.shard_options.describe()

    def _predicts_only(self) -> bool:
        return self._settled.for_prediction_only

    def _draw_map(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> DrawMap | None:
        return shard_draw_map(self.shard_options, self._predictor.label(args, kwargs), self._describe())

    def _jax_to_ask(self) -> Callable[..., Any]:
        if self._settled.options.jax_mesh is not None:
            return self._jax_fn
        return self.options.jax_transform(self.__wrapped__)  # the mesh comes from the context: a fresh transform

    @traceback_boundary
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if self._settled.for_prediction_only:
            raise SpecError(
                f"{self._describe()} was given its mesh as {{name: size}}, which can predict but not run",
                hint="pass a jax.sharding.Mesh (for example jax.make_mesh(...)) to run it",
            )
        if self._settled.has_static and self._passes_non_arrays(args):
            # A real call closes over what in_specs passes whole, even a str, which
            # jax.eval_shape (and so predict) cannot take: JAX alone can run this call.
            return self._jax_call(*args, **kwargs)  # type: ignore[no-any-return]
        return super().__call__(*args, **kwargs)

    def _passes_non_arrays(self, args: tuple[Any, ...]) -> bool:
        """Whether an argument that in_specs passes whole (None) is not a JAX value."""
        paired = broadcast_prefix(self._settled.options.in_specs, args, is_spec_leaf)
        if isinstance(paired, PrefixMismatch):
            return False  # the checks explain it
        leaves = jax.tree_util.tree_leaves(args)
        return any(
            spec is None and array_shape(leaf) is None and not isinstance(leaf, (bool, int, float, complex))
            for leaf, spec in zip(leaves, paired, strict=True)
        )

    @traceback_boundary
    def predict(self, *args: Any, **kwargs: Any) -> ShardPrediction:
        """Global output shapes and per-device blocks for these arguments (see `Prediction`)."""
        pred = super().predict(*args, **kwargs)
        assert isinstance(pred, ShardPrediction)
        return pred

    @traceback_boundary
    def predict_with_mesh(
        self, mesh: Mesh | AbstractMesh | dict[str, int], *args: Any, **kwargs: Any
    ) -> ShardPrediction:
        """`predict` on another mesh, e.g. `{"data": 64, "model": 8}`: one this machine may not have."""
        shape = mesh_shape(mesh, "predict_with_mesh mesh")
        _axis_names(self._settled.options.axis_names, shape)
        jax_mesh = mesh if isinstance(mesh, (Mesh, AbstractMesh)) else shape.abstract()
        model = self.model
        assert isinstance(model, ShardModel)
        model = replace(model, options=replace(model.options, mesh=shape, jax_mesh=jax_mesh))
        args, kwargs = shapes_as_structs(args, kwargs, self._predictor.tuple_dtypes)
        try:
            pred = self._predictor.derive(args, kwargs, model)
        except AxisCheckError as err:
            raise err from err.__cause__
        assert isinstance(pred, ShardPrediction)
        return pred


@overload
def shard_map(
    f: Callable[P, R],
    /,
    *,
    out_specs: Any,
    in_specs: Any = INFER_SPECS,
    mesh: Mesh | AbstractMesh | dict[str, int] | None = None,
    axis_names: Set[str] = frozenset(),
    check_vma: bool = True,
    signature: SignatureLike | None = None,
) -> ShardMapped[P, R]: ...


@overload
def shard_map(
    f: None = None,
    /,
    *,
    out_specs: Any,
    in_specs: Any = INFER_SPECS,
    mesh: Mesh | AbstractMesh | dict[str, int] | None = None,
    axis_names: Set[str] = frozenset(),
    check_vma: bool = True,
    signature: SignatureLike | None = None,
) -> Callable[[Callable[P, R]], ShardMapped[P, R]]: ...


@traceback_boundary
@refusing_misspelled_options
def shard_map(
    f: Callable[P, R] | None = None,
    /,
    *,
    out_specs: Any,
    in_specs: Any = INFER_SPECS,
    mesh: Mesh | AbstractMesh | dict[str, int] | None = None,
    axis_names: Set[str] = frozenset(),
    check_vma: bool = True,
    signature: SignatureLike | None = None,
) -> ShardMapped[P, R] | Callable[[Callable[P, R]], ShardMapped[P, R]]:
    """Drop-in `jax.shard_map` that predicts, checks and explains its specs.

    Same parameters as `jax.shard_map`, plus `signature` (the per-device signature: the
    shapes of one device's blocks). `mesh` may also be an `AbstractMesh` or a dict of
    axis sizes, to predict for a mesh this machine does not have; `predict` gives the
    global outputs and `block_shapes`, and `predict_with_mesh` tries another mesh.

    ```python
    >>> from jax.sharding import PartitionSpec as P
    >>> f = ax.shard_map(lambda a: jax.lax.psum(a, "x"), mesh={"x": 64}, in_specs=P("x"), out_specs=P())
    >>> f.predict((256, 3)).shapes
    Shape(4, 3)
    ```
    """
    if checks_off():
        if isinstance(mesh, dict):  # sizes to plan for: JAX's own spelling of that mesh
            mesh = AbstractMesh(tuple(mesh.values()), tuple(mesh))
        return unchecked(  # type: ignore[no-any-return]
            JAX_SHARD_MAP,
            f,
            out_specs=out_specs,
            in_specs=in_specs,
            mesh=mesh,
            axis_names=axis_names,
            check_vma=check_vma,
        )
    options = ShardMapOptions(out_specs, in_specs, mesh, axis_names, check_vma)
    if f is None:

        def decorate(g: Callable[P, R]) -> ShardMapped[P, R]:
            return ShardMapped(g, options, signature)

        return decorate
    return ShardMapped(f, options, signature)

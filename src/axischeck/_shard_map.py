"""`axischeck.shard_map`: `jax.shard_map` with a per-device signature, prediction and checks."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Set
from dataclasses import dataclass, replace
from typing import Any, ParamSpec, TypeVar, cast, overload

import jax
import numpy as np
from jax.sharding import AbstractMesh, Mesh, PartitionSpec

from ._core._cache import BoundedCache
from ._core._errors import AxisCheckError, SpecError
from ._core._jax_compat import INFER_SPECS, JAX_SHARD_MAP, traceback_boundary
from ._core._keys import lookup, store
from ._core._leaves import array_shape, shapes_as_structs
from ._core._prediction import Prediction, ShardPrediction
from ._core._steps import ShardStep
from ._core._text import short_repr
from ._core._trees import PrefixMismatch, broadcast_prefix, check_nesting
from ._engine._mesh import MeshShape, mesh_shape
from ._engine._models import Outcome
from ._engine._predictor import (
    Build,
    Models,
    Predictor,
    declared_core,
    fn_name,
    inner_model,
    options_key,
    predictor_for,
)
from ._engine._shard_model import ShardModel, ShardOptions, is_spec_leaf
from ._engine._signature import Signature, SignatureLike, parsed_signature
from ._switch import checks_disabled, checks_off, unchecked
from ._transform import Transformed, require_callable

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
class _Settled:
    """What shard_map's options were validated into (for one function name)."""

    options: ShardOptions
    has_static: bool  # some in_specs entry is None: that argument is passed whole
    for_prediction_only: bool  # the mesh was given as {name: size}


_SETTLED: BoundedCache[_Settled] = BoundedCache(256)
"""(options, function name) -> what they were validated into: shard_map written inline
(in a loop, in a jitted step) validates its options once."""


def _options_key(mesh: Any, in_specs: Any, out_specs: Any, axis_names: Any, check_vma: Any) -> Hashable | None:
    """The options as a key (None when they cannot be one): every value with its type, a
    mesh by equality (a dict of sizes by its typed items), specs by their structure and
    typed leaves (see `_specs_key`), axis names typed, check_vma only if a bool or an int
    (another object's `__eq__` may say equal to anything). A plain tuple: meshes and specs
    hash and compare in C, cheaper than a key object whose comparison runs Python.
    Raises `SpecError` for cyclic or absurdly deep specs, before anything flattens them."""
    in_key = in_specs if type(in_specs) is PartitionSpec else _specs_key(in_specs, "in_specs")
    out_key = out_specs if type(out_specs) is PartitionSpec else _specs_key(out_specs, "out_specs")
    if in_key is _NO_KEY or out_key is _NO_KEY or type(check_vma) not in _KEYED_FLAGS:
        return None
    types = (type(mesh), type(in_specs), type(out_specs), type(axis_names), type(check_vma))
    if isinstance(mesh, dict):
        mesh = tuple((name, type(size), size) for name, size in mesh.items())
    if isinstance(axis_names, (set, frozenset)):
        axis_names = frozenset((type(name), name) for name in axis_names) if axis_names else _NO_NAMES
    try:
        key = (types, (mesh, in_key, out_key, axis_names, check_vma))
        hash(key)
    except Exception:  # unhashable: validated unkeyed
        return None
    return key


def _specs_key(specs: Any, what: str) -> Hashable:
    """Specs as a key: as they are for the common forms (a `PartitionSpec`, a flat tuple
    of them and None), else their tree structure and each leaf with its type (equal specs
    in containers of different types, or in containers whose `__eq__` says equal whatever
    they hold, differ there); `_NO_KEY` when they cannot be flattened."""
    kind = type(specs)
    if kind is PartitionSpec or specs is None or (kind is tuple and _FLAT_SPEC_TYPES.issuperset(map(type, specs))):
        return specs  # type: ignore[no-any-return]
    check_nesting(specs, f"shard_map {what}")  # jaxlib's flatten must never meet a cycle
    try:
        leaves, treedef = jax.tree_util.tree_flatten(specs, is_leaf=is_spec_leaf)
    except Exception:
        return _NO_KEY
    return (treedef, tuple((type(leaf), leaf) for leaf in leaves))


_NO_KEY: Hashable = object()
"""`_specs_key` for specs that cannot be flattened: the options are then not keyed."""
_KEYED_FLAGS = frozenset({bool, int, np.bool_})
_NO_NAMES: frozenset[Any] = frozenset()
_FLAT_SPEC_TYPES = frozenset({PartitionSpec, type(None)})


def _settle(
    f: Callable[..., Any], mesh: Any, in_specs: Any, out_specs: Any, axis_names: Any, check_vma: Any
) -> _Settled:
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
    options = ShardOptions(shape, jax_mesh, in_specs, out_specs, names, vma, fn_name(f))
    return _Settled(options, has_static, for_prediction_only)


class ShardMapped(Transformed[P, R]):
    """A function wrapped by `axischeck.shard_map` (see `shard_map`).

    ```python
    >>> from jax.sharding import PartitionSpec as P
    >>> f = ax.shard_map(lambda a: a * 2, mesh={"x": 4}, in_specs=P("x"), out_specs=P("x"))
    >>> f.predict((16, 3)).block_shapes, f.predict_with_mesh({"x": 16}, (16, 3)).block_shapes
    (Shape(4, 3), Shape(1, 3))
    ```
    """

    def __init__(
        self,
        f: Callable[P, R],
        out_specs: Any,
        in_specs: Any,
        mesh: Mesh | AbstractMesh | dict[str, int] | None,
        axis_names: Set[str],
        check_vma: bool,
        signature: SignatureLike | None,
    ) -> None:
        require_callable(f, "shard_map")
        key = _options_key(mesh, in_specs, out_specs, axis_names, check_vma)
        name = fn_name(f)
        settled: _Settled | None = lookup(_SETTLED, (key, name)) if key is not None else None
        if settled is None:
            settled = _settle(f, mesh, in_specs, out_specs, axis_names, check_vma)
            if key is not None:
                store(_SETTLED, (key, name), settled)
        options = settled.options
        self._has_static = settled.has_static
        self._mesh_for_prediction_only = settled.for_prediction_only
        if options.axis_names or check_vma is not True:  # as given: JAX validates and records them
            jax_fn = JAX_SHARD_MAP(
                f,
                mesh=options.jax_mesh,
                in_specs=in_specs,
                out_specs=out_specs,
                axis_names=axis_names,
                check_vma=check_vma,
            )
        else:  # JAX's defaults, left out of its call (which costs less without them)
            jax_fn = JAX_SHARD_MAP(f, mesh=options.jax_mesh, in_specs=in_specs, out_specs=out_specs)
        if signature is not None:  # a pytree of dims is checked before anything flattens it
            signature = parsed_signature(signature)
        self._given = (out_specs, in_specs, mesh, axis_names, check_vma)  # as given: for `_remake`
        shared = ("shard_map", key, signature) if key is not None else options_key("shard_map", options, signature)
        self._start(f, jax_fn, options, shared, signature)

    def _start(
        self,
        f: Callable[P, R],
        jax_fn: Callable[..., Any],
        options: ShardOptions,
        key: Hashable,
        signature: Signature | None,
    ) -> None:
        """What every shard_map-like transform shares once its options are settled: the
        predictor shared by all transforms of `f` with the same `key` (every option that
        changes an answer, the signature included, typed as `options_key` types them),
        found at first use."""
        self.options = options  # shown; what is derived later reads `_settled`
        self._settled = options
        self._key = key
        self._declared = signature
        if signature is not None:  # a declared signature must fit the function: said now
            declared_core(f, signature, options.name)
        super().__init__(f, jax_fn)

    def _find_predictor(self) -> Predictor:
        return _shard_predictor(self.__wrapped__, self._key, self._declared, self._settled)

    def _remake(self) -> tuple[Callable[..., Any], dict[str, Any]]:
        out_specs, in_specs, mesh, axis_names, check_vma = self._given
        return shard_map, {
            "out_specs": out_specs,
            "in_specs": in_specs,
            "mesh": mesh,
            "axis_names": axis_names,
            "check_vma": check_vma,
            "signature": self._declared,
        }

    def _describe(self) -> str:
        return self.options.describe()

    def _predicts_only(self) -> bool:
        return self._mesh_for_prediction_only

    def _jax_to_ask(self) -> Callable[..., Any]:
        if self._settled.jax_mesh is not None:
            return self._jax_fn
        make, options = self._remake()  # the mesh comes from the context: a fresh transform
        with checks_disabled():
            return cast(Callable[..., Any], make(self.__wrapped__, **{**options, "signature": None}))

    @traceback_boundary
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if self._mesh_for_prediction_only:
            raise SpecError(
                f"{self._describe()} was given its mesh as {{name: size}}, which can predict but not run",
                fix="pass a jax.sharding.Mesh (for example jax.make_mesh(...)) to run it",
            )
        if self._has_static and self._passes_non_arrays(args):
            # A real call closes over what in_specs passes whole, even a str, which
            # jax.eval_shape (and so predict) cannot take: JAX alone can run this call.
            return self._jax_fn(*args, **kwargs)  # type: ignore[no-any-return]
        return super().__call__(*args, **kwargs)

    def _passes_non_arrays(self, args: tuple[Any, ...]) -> bool:
        """Whether an argument that in_specs passes whole (None) is not a JAX value."""
        paired = broadcast_prefix(self.options.in_specs, args, is_spec_leaf)
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
        _axis_names(self.options.axis_names, shape)
        jax_mesh = mesh if isinstance(mesh, (Mesh, AbstractMesh)) else shape.abstract()
        model = self.model
        assert isinstance(model, ShardModel)
        model = replace(model, options=replace(self.options, mesh=shape, jax_mesh=jax_mesh))
        args, kwargs = shapes_as_structs(args, kwargs, self._predictor.tuple_dtypes)
        try:
            pred = self._predictor.full(args, kwargs, model)
        except AxisCheckError as err:
            raise err from err.__cause__
        assert isinstance(pred, ShardPrediction)
        return pred


class ShardPredictor(Predictor):
    """A shard_map's predictions carry the per-device blocks and the mesh."""

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


def _shard_predictor(
    f: Callable[..., Any], key: Hashable, signature: Signature | None, options: ShardOptions
) -> Predictor:
    """The predictor shared by the shard_map-like transforms of `f` with this key, found at
    first use (the options are settled at construction: nothing is left to validate)."""

    def prepare() -> Build:
        return lambda fun, held: _shard_models(fun, held, signature, options)

    return predictor_for(f, key, prepare, ShardPredictor)


def _shard_models(
    fun: Callable[..., Any], held: Callable[..., Any], signature: Signature | None, options: ShardOptions
) -> Models:
    options = replace(options, name=fn_name(fun))  # the Build is shared by functions with these options
    inner, per_device, fallback_inner = inner_model(fun, held, signature, options.name)
    fallback = ShardModel(options, fallback_inner, held) if fallback_inner is not None else None
    return Models(ShardModel(options, inner, held), fallback, per_device, None)


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
        options = {"out_specs": out_specs, "in_specs": in_specs, "mesh": mesh}
        return unchecked(JAX_SHARD_MAP, f, **options, axis_names=axis_names, check_vma=check_vma)  # type: ignore[no-any-return]
    if f is None:

        def decorate(g: Callable[P, R]) -> ShardMapped[P, R]:
            return ShardMapped(g, out_specs, in_specs, mesh, axis_names, check_vma, signature)

        return decorate
    return ShardMapped(f, out_specs, in_specs, mesh, axis_names, check_vma, signature)

"""What a prediction found: shapes, the mapped size, and the derivation steps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from ._explain import render_steps
from ._html import prediction_html
from ._jax_compat import TRUSTED_ARRAY_TYPES
from ._shape import Shape
from ._steps import Step


class Prediction:
    """The predicted outputs of a transformed call, and how they were derived.

    - `shapes`: a pytree shaped like the function's output, with `Shape` leaves.
    - `axis_size`: the mapped size of the outermost transform (None for `check`).
    - `steps`: the derivation, outermost transform first; `str(prediction)` renders it.

    In Jupyter a prediction shown as a cell's value is drawn as HTML (`_repr_html_`): the
    derivation table and each argument's axes with the mapped one marked (for pmap,
    shard_map and smap, the mesh and one device's block).

    ```python
    >>> f = lambda x, y, z: jnp.einsum("ab,bc->ac", x, y) + z
    >>> pred = ax.vmap(f, in_axes=(0, 1, 0), signature="(a,b),(b,c),(a,c)->(a,c)").predict(
    ...     (16, 8, 4), (4, 16, 2), (16, 8, 2))
    >>> pred.shapes
    Shape(16, 8, 2)
    ```
    """

    __slots__ = ("_axis_size", "_flat", "_replay", "_shapes", "_steps", "traced")

    def __init__(
        self,
        shapes: Any,
        axis_size: int | None,
        steps: tuple[Step, ...] | None = None,
        replay: Callable[[], tuple[Step, ...]] | None = None,
        *,
        traced: bool = False,
    ) -> None:
        self._shapes = shapes
        self.traced = traced  # the answer came from tracing the function (see _keys)
        self._axis_size = axis_size
        self._steps = steps
        self._replay = replay  # the fast path derives the table only when asked
        self._flat: tuple[list[Any], Any] | None = None

    @property
    def shapes(self) -> Any:
        """A pytree shaped like the function's output, with `Shape` leaves."""
        return self._shapes

    @property
    def axis_size(self) -> int | None:
        """The outermost mapped size (None for `check`, which maps nothing)."""
        return self._axis_size

    def matches(self, out: Any) -> bool:
        """Whether a call's output has the predicted structure and shapes (the common
        case, checked on every eager call; `verify_output` says where it does not). One
        array, the commonest output, is its shape against the predicted one: nothing to
        flatten."""
        shapes = self._shapes
        if type(shapes) is Shape and type(out) in TRUSTED_ARRAY_TYPES:
            same: bool = out.shape == shapes
            return same
        got, treedef = jax.tree_util.tree_flatten(out)
        want, want_def = self.flat
        return treedef == want_def and all(getattr(g, "shape", None) == w for g, w in zip(got, want, strict=True))

    @property
    def flat(self) -> tuple[list[Any], Any]:
        """`jax.tree_util.tree_flatten(self.shapes)`, computed once (checked calls use it)."""
        if self._flat is None:
            self._flat = jax.tree_util.tree_flatten(self._shapes)
        return self._flat

    @property
    def steps(self) -> tuple[Step, ...]:
        """The derivation, outermost transform first."""
        steps = self._steps
        if steps is None:  # two threads may both derive it: the same value, no lock needed
            replay = self._replay
            assert replay is not None
            steps = self._steps = replay()
        return steps

    def copy(self) -> Prediction:
        """The same prediction with pytrees of its own (the leaves are immutable `Shape`s)."""
        new = Prediction.__new__(type(self))
        self._copy_into(new)
        return new

    def _copy_into(self, new: Prediction) -> None:
        new._shapes = _fresh(self._shapes)
        new._axis_size = self._axis_size
        new._steps = self._steps
        new._replay = self._replay
        new._flat = None
        new.traced = self.traced

    def __getstate__(self) -> dict[str, Any]:
        """Pickled with its derivation, derived now if it was left for later (what derives
        it holds the predictor, which is not pickled)."""
        state = {name: getattr(self, name) for cls in type(self).__mro__ for name in getattr(cls, "__slots__", ())}
        state.update(_steps=self.steps, _replay=None, _flat=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)

    def __str__(self) -> str:
        return render_steps(self.steps)

    def __repr__(self) -> str:
        return f"Prediction(shapes={self.shapes!r}, axis_size={self.axis_size!r})"

    def _repr_html_(self) -> str:
        """The prediction as HTML, for Jupyter: its tables and drawings."""
        return prediction_html(self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Prediction):
            return NotImplemented
        return (self.shapes, self.axis_size) == (other.shapes, other.axis_size)

    def __hash__(self) -> int:
        return hash((str(self.shapes), self.axis_size))


Prediction.__module__ = "axischeck"


class ShardPrediction(Prediction):
    """A `shard_map` prediction: global output shapes and what each device holds.

    - `shapes`: the global outputs (as `jax.eval_shape` of the `shard_map` gives them).
    - `block_shapes`: the per-device output blocks, shaped like `shapes`.
    - `in_block_shapes`: the per-device argument blocks, shaped like the arguments.
    - `mesh`: `{axis name: size}` of the mesh predicted for.

    ```python
    >>> from jax.sharding import PartitionSpec as P
    >>> f = ax.shard_map(lambda a: a * 2, mesh={"x": 4, "y": 2}, in_specs=P("x", "y"), out_specs=P("x", "y"))
    >>> pred = f.predict((16, 6))
    >>> pred.shapes, pred.block_shapes
    (Shape(16, 6), Shape(4, 3))
    ```
    """

    __slots__ = ("_blocks", "_in_blocks", "_mesh")

    def __init__(
        self,
        shapes: Any,
        steps: tuple[Step, ...] | None,
        blocks: Any,
        in_blocks: Any,
        mesh: dict[str, int],
        replay: Callable[[], tuple[Step, ...]] | None = None,
    ) -> None:
        super().__init__(shapes, None, steps, replay)
        self._blocks = blocks
        self._in_blocks = in_blocks
        self._mesh = mesh

    @property
    def block_shapes(self) -> Any:
        """The per-device output blocks, a pytree shaped like `shapes`."""
        return self._blocks

    @property
    def in_block_shapes(self) -> Any:
        """The per-device argument blocks (what the function sees), shaped like the arguments."""
        return self._in_blocks

    @property
    def mesh(self) -> dict[str, int]:
        """The mesh predicted for: `{axis name: size}`."""
        return dict(self._mesh)

    def _copy_into(self, new: Prediction) -> None:
        super()._copy_into(new)
        assert isinstance(new, ShardPrediction)
        new._blocks = _fresh(self._blocks)
        new._in_blocks = _fresh(self._in_blocks)
        new._mesh = dict(self._mesh)

    def __repr__(self) -> str:
        return f"ShardPrediction(shapes={self.shapes!r}, block_shapes={self.block_shapes!r}, mesh={self._mesh!r})"


ShardPrediction.__module__ = "axischeck"


def _fresh(tree: Any) -> Any:
    """A copy of a pytree's containers (its leaves are immutable)."""
    if type(tree) is Shape or tree is None:
        return tree
    import jax

    return jax.tree_util.tree_map(lambda leaf: leaf, tree)

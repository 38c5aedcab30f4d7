"""One frozen options value per transform: what the user gave it, validated once, keyed.

Each transform keeps its options as one value (`VmapOptions`, `PmapOptions`,
`ShardMapOptions`, `SmapOptions`, `CheckOptions`, each in its transform's module). The
value answers the few questions a transform asks of its options:

- `key()`: everything in them that can change an answer, as a key two options values
  share only when they mean the same (None: they cannot be keyed, and share nothing).
  Transforms of one function whose options and signature key alike share one predictor.
- `validate()`: the options checked (raising `SpecError`) and put in the engine's terms;
  `validated` runs it once per key, so a transform written inline in a loop pays a lookup.
- `models(...)`: the models of a function, from what `validate` made of the options.
- `jax_transform(fun)`: JAX's own transform of `fun` with these options.
- `as_kwargs()`: the keyword options as given, to make the transform again (copy,
  pickle, `infer_signature`).

The cache rule, here as for every cache in axischeck (see `_core._keys`): a key holds
everything that can change the answer, and typed where equal values of different types
mean different things (`1` and `True`, a tuple and a namedtuple).
"""

from __future__ import annotations

import dataclasses
import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping
from typing import Any, ClassVar, Generic, Self, TypeVar, overload

import jax

from ._core._cache import BoundedCache
from ._core._errors import SpecError
from ._core._jax_compat import custom_axis_spec
from ._core._keys import lookup, store
from ._core._option_names import MEANT, STATIC_OPTIONS, unmapped_instead
from ._core._trees import check_nesting, flat_axes
from ._engine._predictor import Predictor
from ._engine._signature import Signature
from ._engine._transform_models import Models

V = TypeVar("V")
T = TypeVar("T")


class Options(ABC, Generic[V]):
    """A transform's options as the user gave them (a frozen dataclass in each subclass).

    Options JAX's flatten must never meet (cyclic or absurdly deep trees) are refused when
    the value is made (`refuse_cyclic_axes`, in a subclass's `__post_init__`), before JAX
    is given them.
    """

    __slots__ = ()

    kind: ClassVar[str]
    """The transform's name, as messages and JAX say it."""

    predictor: ClassVar[type[Predictor]] = Predictor
    """The predictor class of the transforms made with these options."""

    jax_caches_traces: ClassVar[bool] = False
    """Whether JAX's transform answers a call like an earlier one from its cache, without
    tracing the function again (pmap does; eager vmap traces at every call)."""

    @abstractmethod
    def key(self) -> Hashable | None:
        """Everything in the options that can change an answer (None: not keyable)."""

    @abstractmethod
    def validate(self) -> V:
        """The options checked and put in the engine's terms; raises `SpecError`."""

    @staticmethod
    @abstractmethod
    def models(meaning: V, fun: Callable[..., Any], held: Callable[..., Any], signature: Signature | None, /) -> Models:
        """The models of `fun` (`held` calls it through a weak reference) under options
        that `validate` made `meaning` of (a predictor keeps this, not the options: a
        list given as in_axes may be changed after validation)."""

    @abstractmethod
    def jax_transform(self, fun: Callable[..., Any]) -> Callable[..., Any]:
        """JAX's own transform of `fun` with these options."""

    def as_kwargs(self) -> dict[str, Any]:
        """The keyword options as given."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}  # type: ignore[arg-type]

    def as_built(self) -> Self:
        """These options with their list and dict values copied: what JAX's transform was
        built with, for one built again later (a list given as in_axes may be changed after
        the transform is made; JAX read it when it made its own)."""
        if not self.may_hold_containers:
            return self
        changes = {
            name: _containers_copied(value)
            for name in _init_fields(type(self))
            if isinstance(value := getattr(self, name), (list, dict))
        }
        return dataclasses.replace(self, **changes) if changes else self  # type: ignore[type-var]

    @property
    def may_hold_containers(self) -> bool:
        """Whether an option value may be a list or dict (for `as_built` to copy)."""
        return True

    def changed(self, changes: Mapping[str, Any]) -> Self:
        """These options with some changed (a fix's), validated as any are when used."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    def explain_refusal(self, fun: Callable[..., Any]) -> None:
        """Raises axischeck's account of what JAX refused in `fun` or these options (in
        the order JAX checks them), if axischeck has one."""
        require_callable(fun, self.kind)
        self.validate()

    @property
    def defers_to_jax(self) -> bool:
        """Whether the options hold what axischeck cannot model (custom axis spec types):
        every answer is then JAX's own."""
        return False

    @property
    def rides_jax_trace(self) -> bool:
        """Whether JAX's transform holds a recorder of the function (see `_in_trace`), so
        that the checks of every call it traces can ride JAX's trace. Otherwise a recording
        transform is made for the calls whose random draws are checked (the first of each
        key), and every other call is JAX's own."""
        return False

    maps: ClassVar[bool] = True
    """Whether the transform maps the function (every one but `ax.check`): its calls'
    random draws are checked on JAX's trace of them (see `_draws`)."""

    jax_refuses_every_mistake: bool = False
    """Whether JAX itself refuses every mistake these options allow (nothing it may answer
    silently): a function that declares no dims then has nothing to check before JAX runs
    a call, and a refusal is explained after it. A fact a subclass finds once, when its
    options are made (every construction reads it)."""


@functools.cache
def _init_fields(kind: type) -> tuple[str, ...]:
    """The names of an options class's fields given to its constructor (read once per class)."""
    return tuple(f.name for f in dataclasses.fields(kind) if f.init)


def _containers_copied(value: Any) -> Any:
    """`value` with its pytree containers made anew around the same leaves (devices,
    meshes and specs are not copied); as it is where it cannot be flattened."""
    try:
        return jax.tree_util.tree_map(lambda leaf: leaf, value, is_leaf=lambda x: x is None)
    except Exception:
        return value


class Shown(Generic[T]):
    """An option as the user gave it, shown on the transform (`f.in_axes`), read from its
    `options`. Assigning one gives the transform an attribute of its own, as assigning
    any attribute of a function does, and changes nothing: `options` is what counts."""

    __slots__ = ("_name",)

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, transform: None, owner: type | None = None) -> Self: ...

    @overload
    def __get__(self, transform: object, owner: type | None = None) -> T: ...

    def __get__(self, transform: Any, owner: type | None = None) -> Any:
        if transform is None:
            return self
        return getattr(transform.options, self._name)


_VALIDATED: BoundedCache[Any] = BoundedCache(256)
"""Options key -> what `validate` made of those options (no function in it)."""


def validated(options: Options[V], key: Hashable | None) -> V:
    """What `options.validate()` makes of the options, once per key (`options.key()`,
    which the caller has at hand): a new function with options seen before (a lambda
    written inline) skips the validation."""
    meaning: V | None = lookup(_VALIDATED, key)
    if meaning is None:
        meaning = options.validate()  # may raise: nothing is stored then
        store(_VALIDATED, key, meaning)
    return meaning


def typed_key(kind: str, *options: Any) -> Hashable:
    """A key for option values: each with its type, containers spelled out (so `1` and
    `True`, a tuple and a namedtuple, a list and a tuple all differ). A key that cannot be
    hashed shares nothing (`PerFunction.get_or_make`). The common options (scalars, flat
    tuples of ints) are taken as they are, their types beside them."""
    values = [option if type(option) in _PLAIN or flat_axes(option) else _typed(option) for option in options]
    return (kind, tuple(map(type, options)), tuple(values))


_PLAIN = frozenset({int, str, bool, type(None), Signature})
"""Option types whose values are equal exactly when they mean the same, given the type."""


def _typed(value: Any) -> Hashable:
    kind = type(value)
    if kind is int or kind is str or value is None:
        return (kind, value)
    if kind is tuple and flat_axes(value):  # ints and None only: equal exactly when the tuples are
        return (kind, value)
    if isinstance(value, (tuple, list)):
        return (kind, tuple(_typed(v) for v in value))
    if isinstance(value, dict):
        return (kind, tuple((_typed(k), _typed(v)) for k, v in value.items()))
    return (kind, value)


def require_callable(fun: object, transform: str) -> None:
    if not callable(fun):
        raise SpecError(f"{transform} needs a callable, got {type(fun).__name__}: {fun!r}")


def refuse_cyclic_axes(in_axes: Any, out_axes: Any, transform: str) -> None:
    """Cyclic or absurdly deep axes are refused before JAX's flatten recurses into them."""
    if not flat_axes(in_axes):
        check_nesting(in_axes, f"{transform} in_axes")
    if not flat_axes(out_axes):
        check_nesting(out_axes, f"{transform} out_axes")


def custom_axes(*trees: Any) -> bool:
    """Whether in_axes/out_axes hold spec objects of `register_vmappable` types."""
    for tree in trees:
        if flat_axes(tree):
            continue
        try:
            leaves = jax.tree_util.tree_leaves(tree)
        except Exception:  # a tree JAX cannot flatten holds no spec objects: `validate` explains it
            continue
        if any(custom_axis_spec(leaf) for leaf in leaves):
            return True
    return False


F = TypeVar("F", bound=Callable[..., Any])


def refusing_misspelled_options(make: F) -> F:
    """`make` (a transform's public function) refusing a keyword it does not take as
    Python does, with a `TypeError` that is also a `SpecError` and names the option
    meant (`axis=0` for `in_axes=0`: "did you mean in_axes?"). Its signature, as
    `inspect.signature` and type checkers read it, stays `make`'s own."""
    import inspect

    known = frozenset(inspect.signature(make).parameters)
    name = make.__name__

    @functools.wraps(make)
    def checked(*args: Any, **kwargs: Any) -> Any:
        refused = unknown_option(name, kwargs, known)
        if refused is not None:
            raise refused
        return make(*args, **kwargs)

    return checked  # type: ignore[return-value]


def unknown_option(name: str, kwargs: Mapping[str, Any], known: frozenset[str]) -> SpecError | None:
    """The error for the first keyword in `kwargs` that the transform `name` does not take
    (None if it takes them all): Python's words, and the option meant as a hint."""
    import difflib

    word = next((word for word in kwargs if word not in known), None)  # the first as written, as Python names it
    if word is None:
        return None
    meant = [MEANT[word]] if MEANT.get(word) in known else difflib.get_close_matches(word, sorted(known), n=1)
    hint = f"write {meant[0]}={kwargs[word]!r} (did you mean {meant[0]}?)" if meant else None
    if hint is None and word in STATIC_OPTIONS and "in_axes" in known:
        hint = unmapped_instead(name, kwargs[word])
    return SpecError(f"{name}() got an unexpected keyword argument {word!r}", hint=hint)

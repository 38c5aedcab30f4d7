"""What axischeck keeps and shares is keyed soundly.

A transform shares its predictor with every transform of the same function and equal
options, and what the options were validated into with every function given them: equal
options share (a signature's text keyed by its text), options that only compare equal (by
`__eq__`, across types, or edited after construction) never do, and each function keeps its
own names and parameters. What is kept per function follows its code: a function whose
`__code__` is replaced in place (IPython's autoreload), directly or through a wrapper, is
answered for its new code, as JAX does. The rule is in `axischeck._core._keys`;
`test_call_histories.py` checks the caches over random histories of use, `test_dropin.py`
the answers they hand out.
"""

from __future__ import annotations

import collections
import copy
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import axischeck as ax
from axischeck._debug import predictor_of
from jax_oracle import sds


@pytest.mark.devices(8)
def test_functions_built_with_the_same_options_keep_their_own_names_and_parameters() -> None:
    """What a transform makes of its options is shared by every function given them (a
    lambda written inline is a new function each time): the function's own name and
    parameters must still be its own, including for wrappers that share one code object."""

    def first(a: jax.Array, b: jax.Array) -> jax.Array:
        return a

    def second(x: jax.Array, y: jax.Array) -> jax.Array:
        return x

    def wrapped(g: Callable[..., jax.Array]) -> Callable[..., jax.Array]:
        @functools.wraps(g)
        def call(*args: jax.Array) -> jax.Array:
            return g(*args)

        return call

    builds: list[Callable[[Callable[..., jax.Array]], Any]] = [
        lambda f: ax.vmap(f, in_axes=(0, 0)),
        lambda f: ax.vmap(f, in_axes=(0, 0), signature="(n),(n)->(n)"),
        lambda f: ax.shard_map(f, mesh={"x": 2}, in_specs=(P("x"), P("x")), out_specs=P("x")),
        lambda f: ax.smap(f, in_axes=(0, 0), out_axes=0, axis_name="x"),  # the context mesh: not in its key
    ]
    mesh = jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,), devices=jax.devices()[:2])
    for build in builds:
        for f, name, param in [(first, "first", "b"), (second, "second", "y")] * 2:
            for g in (f, wrapped(f)):
                with pytest.raises(ax.AxisCheckError) as info, jax.set_mesh(mesh):
                    build(g).predict((4, 3), (5, 3))
                text = str(info.value)
                assert name in text and param in text, (name, text)


def test_shard_map_options_never_share_what_they_were_validated_into() -> None:
    """shard_map validates its options once per (options, function name): options that
    differ, hashable or not (a dict inside in_specs), must each get their own."""
    x = {"w": jax.ShapeDtypeStruct((16,), jnp.float32)}
    cases = [
        ({"x": 8}, ({"w": P("x")},), (2,)),
        ({"x": 8}, ({"w": P()},), (16,)),
        ({"x": 4}, ({"w": P("x")},), (4,)),
        ({"x": 8}, (P("x"),), (2,)),
        ({"x": 4}, (P("x"),), (4,)),
        ({"x": 8}, (P(),), (16,)),
    ]
    for mesh, in_specs, block in cases * 2:
        f = ax.shard_map(lambda d: d["w"], mesh=mesh, in_specs=in_specs, out_specs=P(), check_vma=False)
        assert f.predict(x).in_block_shapes[0]["w"] == block, (mesh, in_specs)


def test_a_list_changed_after_construction_keys_no_other_transform() -> None:
    """A list given as in_axes is read (validated, keyed) when the transform is made: a
    later change to it must not file that transform's predictor under the new value's key,
    where another transform of the same function, given that value, would find answers
    made for the old one."""

    def add(x: jax.Array, y: jax.Array) -> jax.Array:
        return x + y

    axes: list[Any] = [0, None]
    made_with_list = ax.vmap(add, in_axes=axes, signature="(),()->()")
    axes[1] = 0
    assert made_with_list(jnp.ones(3), jnp.ones(())).shape == (3,)  # the axes as given: (0, None)
    honest = ax.vmap(add, in_axes=[0, 0], signature="(),()->()")
    assert honest(jnp.ones(3), jnp.ones(3)).shape == jax.vmap(add, in_axes=[0, 0])(jnp.ones(3), jnp.ones(3)).shape

    def scale(x: jax.Array, y: jax.Array) -> jax.Array:
        return x * y

    axes = [0, None]
    unsigned = ax.vmap(scale, in_axes=axes)
    axes[1] = 0
    assert unsigned.predict((3,), (4,)).shapes == (3, 4)
    with pytest.raises(ax.ArgumentError):  # two mapped sizes, 3 and 4: JAX refuses it too
        ax.vmap(scale, in_axes=[0, 0]).predict((3,), (4,))


def test_options_changed_after_construction_change_no_answer() -> None:
    """What a transform's options mean is derived (lazily) from the options as given, never
    from what the shown attributes or a list given as in_axes say later: otherwise one
    transform's edit would be cached under its options for every function built with them."""

    def total(x: jax.Array) -> jax.Array:
        return x.sum(0)

    def other(x: jax.Array) -> jax.Array:
        return x.sum(0)

    x = jnp.ones((2, 5, 7))
    want = jax.eval_shape(jax.vmap(total), x).shape
    edited = ax.vmap(lambda v: v.sum(0), in_axes=0, signature="(n,m)->(m)")
    edited.in_axes, edited.out_axes = 1, 1  # before its first use
    assert edited.predict(x).shapes == want
    assert ax.vmap(other, in_axes=0, signature="(n,m)->(m)")(x).shape == want
    assert ax.vmap(other, in_axes=0).predict(x).shapes == want
    # A list given as in_axes, changed later, with the options' cache emptied meanwhile.
    axes: list[Any] = [0, None]
    listed = ax.vmap(lambda a, b: a.sum(0) + b.sum(), in_axes=axes)
    axes[0] = 1
    for k in range(300):  # more option sets than the cache of what options mean holds
        ax.vmap(lambda v: v, in_axes=[0], axis_name=f"n{k}")
    pair = (sds((2, 5, 7)), sds((3,)))
    want_pair = jax.eval_shape(jax.vmap(lambda a, b: a.sum(0) + b.sum(), in_axes=(0, None)), *pair).shape
    assert listed.predict(*pair).shapes == want_pair
    assert ax.vmap(lambda a, b: a.sum(0) + b.sum(), in_axes=[0, None]).predict(*pair).shapes == want_pair
    # shard_map: its shown options are not what it predicts from.
    mesh = {"x": 8}
    split = ax.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    whole = ax.shard_map(lambda a: a, mesh=mesh, in_specs=P(), out_specs=P())

    def block(a: jax.Array) -> jax.Array:
        return a

    split.options = whole.options
    assert split.predict((16, 3)).block_shapes == (2, 3)
    assert ax.shard_map(block, mesh=mesh, in_specs=P("x"), out_specs=P("x")).predict((16, 3)).block_shapes == (2, 3)


def test_a_function_whose_code_is_replaced_is_answered_for_its_new_code() -> None:
    """IPython's autoreload replaces a function's `__code__` in place: what axischeck
    keeps per function (its predictor, the signature's check against its parameters)
    must follow, for new transforms and for ones already made, as `jax.vmap` does."""

    def f(x: jax.Array) -> jax.Array:
        return x.sum()

    def g(x: jax.Array) -> jax.Array:
        return x

    kept = ax.vmap(f)
    assert kept.predict(sds((4, 3))).shapes == (4,)
    f.__code__ = g.__code__
    want = jax.eval_shape(jax.vmap(f), sds((4, 3))).shape
    assert want == (4, 3)
    assert ax.vmap(f).predict(sds((4, 3))).shapes == want
    assert kept.predict(sds((4, 3))).shapes == want
    assert kept(jnp.ones((4, 3))).shape == want

    # A signature checked against the old parameters is checked again against the new.
    def h(x: jax.Array, y: jax.Array) -> jax.Array:
        return x

    def one(x: jax.Array) -> jax.Array:
        return x

    sig = "(n),(m)->(n)"
    used = ax.vmap(h, signature=sig)
    assert used(jnp.ones((2, 3)), jnp.ones((2, 5))).shape == (2, 3)  # its predictor is made
    unused = ax.vmap(h, signature=sig)
    bound = functools.partial(h)
    assert ax.vmap(bound, signature=sig).predict((2, 3), (2, 5)).shapes == (2, 3)
    h.__code__ = one.__code__
    with pytest.raises(ax.SpecError, match="declares 2 inputs"):
        ax.vmap(h, signature=sig)
    with pytest.raises(ax.SpecError, match="declares 2 inputs"):
        ax.vmap(bound, signature=sig)
    with pytest.raises(ax.SpecError, match="declares 2 inputs"):
        unused.predict((2, 3), (2, 5))
    # The kept transform answers for the new code too: JAX's own error, explained.
    with pytest.raises(TypeError):
        used(jnp.ones((2, 3)), jnp.ones((2, 5)))


@pytest.mark.parametrize(
    "wrapping", ["partial", "bound method", "callable object", "nested", "nested inline", "wraps", "wrapper"]
)
def test_a_wrapped_function_whose_code_is_replaced_is_answered_for_its_new_code(wrapping: str) -> None:
    """The code that runs is found through `functools.partial`, bound methods, objects
    whose class defines `__call__`, wrappers that set `__wrapped__` and axischeck's own
    transforms: a kept transform of any of them answers for the new code, as JAX does."""

    def f(x: jax.Array) -> jax.Array:
        return x.sum()

    def g(x: jax.Array) -> jax.Array:
        return x

    class Holder:
        def method(self, x: jax.Array) -> jax.Array:
            return x.sum()

        def __call__(self, x: jax.Array) -> jax.Array:
            return x.sum()

    @functools.wraps(f)
    def wrapper(*args: Any) -> jax.Array:
        return f(*args)

    target: Any
    shape: tuple[int, ...] = (4, 3)
    if wrapping == "partial":
        target, plain = functools.partial(f), lambda: jax.vmap(functools.partial(f))
    elif wrapping == "bound method":
        target, plain = Holder().method, lambda: jax.vmap(Holder().method)
    elif wrapping == "callable object":
        held = Holder()
        target, plain = held, lambda: jax.vmap(held)
    elif wrapping in ("wraps", "wrapper"):
        target, plain = wrapper, lambda: jax.vmap(wrapper)
    else:
        target, plain, shape = ax.vmap(f), lambda: jax.vmap(jax.vmap(f)), (2, 4, 3)
    kept = ax.vmap(ax.vmap(f)) if wrapping == "nested inline" else ax.vmap(target)
    before = kept.predict(shape).shapes
    assert before == jax.eval_shape(plain(), sds(shape)).shape
    if wrapping == "bound method":
        Holder.method.__code__ = (lambda self, x: x).__code__
    elif wrapping == "callable object":
        Holder.__call__.__code__ = (lambda self, x: x).__code__
    elif wrapping == "wrapper":  # the wrapper's own code, not the wrapped function's
        wrapper.__code__ = (lambda *args: jnp.stack([g(*args)] * 2, -1)).__code__
    else:
        f.__code__ = g.__code__
    want = jax.eval_shape(plain(), sds(shape)).shape
    assert want != before
    assert kept.predict(shape).shapes == want
    assert kept(jnp.ones(shape)).shape == want


def test_a_transform_written_inline_finds_the_predictor_its_function_and_options_share() -> None:
    """With flat options and a signature, a new transform of a function finds at
    construction the predictor an earlier transform of them made: only then, and only
    that one. A signature written as text is keyed by its text (hashed in C): the same
    text shares, as equal `Signature` objects do, but a text and a `Signature` do not."""

    def f(x: jax.Array, y: jax.Array) -> jax.Array:
        return x + y

    sig = ax.Signature("(n),(n)->(n)")
    first = ax.vmap(f, in_axes=(0, None), signature=sig)
    assert predictor_of(first, make=False) is None  # nothing made yet: found at first use
    predictor = predictor_of(first)
    assert predictor_of(ax.vmap(f, in_axes=(0, None), signature=sig), make=False) is predictor
    assert (
        predictor_of(ax.vmap(f, in_axes=(0, None), signature=ax.Signature("(n),(n)->(n)")), make=False) is predictor
    )  # equal
    as_text = ax.vmap(f, in_axes=(0, None), signature="(n),(n)->(n)")
    assert predictor_of(as_text, make=False) is None
    text_predictor = predictor_of(as_text)
    assert text_predictor is not predictor and text_predictor.models.signature == predictor.models.signature
    found = ax.vmap(f, in_axes=(0, None), signature="(n),(n)->(n)")  # its text is not parsed again
    assert predictor_of(found, make=False) is text_predictor
    assert found.signature == first.signature and found.batched_signature == first.batched_signature
    assert copy.copy(found).predict((4, 3), (3,)).shapes == (4, 3)
    with pytest.raises(ax.ArgumentError, match="'n'"):
        found(jnp.ones((4, 3)), jnp.ones(2))
    assert predictor_of(ax.vmap(f, in_axes=(0, None), signature="(n), (n) -> (n)"), make=False) is None  # another text
    assert predictor_of(ax.vmap(f, in_axes=(0, 0), signature=sig), make=False) is None
    assert predictor_of(ax.vmap(f, in_axes=(0, None), signature="(m),(m)->(m)"), make=False) is None
    assert predictor_of(ax.vmap(lambda x, y: x + y, in_axes=(0, None), signature=sig), make=False) is None
    assert predictor_of(ax.vmap(f, in_axes=(0, None)), make=False) is None


def test_looking_for_a_callables_code_runs_none_of_its_code() -> None:
    """Which code a callable runs is read only from the types that hold it (functions,
    partials, bound methods, axischeck's transforms, an object's class): an object's own
    `__dict__`, which may be a property that raises, is never asked for it, and the
    transforms of such an object work as JAX's do."""

    class Strange:
        reads = 0

        @property  # type: ignore[misc]
        def __dict__(self) -> dict[str, Any]:  # noqa: PLW3201
            Strange.reads += 1
            raise RuntimeError("__dict__ read")

        def __call__(self, x: jax.Array) -> jax.Array:
            return x * 2

    from axischeck._core._cache import code_of

    fun = Strange()
    want = jax.vmap(fun)(jnp.ones((4, 3))).shape
    assert ax.vmap(fun)(jnp.ones((4, 3))).shape == want
    assert ax.vmap(fun).predict((4, 3)).shapes == want
    assert ax.vmap(fun, signature="(n)->(n)")(jnp.ones((4, 3))).shape == want
    Strange.reads = 0
    assert code_of(fun) is Strange.__call__.__code__  # its class's
    assert Strange.reads == 0


@pytest.mark.devices(8)
def test_shard_map_options_that_compare_equal_but_differ_share_nothing() -> None:
    """shard_map's options key types what it holds, not only the top level: specs in two
    namedtuple types, in pytree nodes whose `__eq__` says equal whatever they hold, and
    mesh sizes given as True or as a tuple of items are told apart."""

    mesh = jax.make_mesh((8,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))

    @jax.tree_util.register_pytree_node_class
    class Box:
        def __init__(self, value: Any) -> None:
            self.value = value

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Box)

        def __hash__(self) -> int:
            return 0

        def tree_flatten(self) -> tuple[tuple[Any], None]:
            return (self.value,), None

        @classmethod
        def tree_unflatten(cls, aux: None, children: Any) -> Box:
            return cls(*children)

    x = jnp.ones((8, 4))
    split = ax.shard_map(lambda b: b.value * 2, mesh=mesh, in_specs=(Box(P("i")),), out_specs=P("i"))
    assert split.predict(Box((8, 4))).shapes == (8, 4)
    whole = ax.shard_map(lambda b: b.value * 2, mesh=mesh, in_specs=(Box(P()),), out_specs=P("i"))
    want = jax.shard_map(lambda b: b.value * 2, mesh=mesh, in_specs=(Box(P()),), out_specs=P("i"))(Box(x)).shape
    with pytest.warns(ax.AxisCheckWarning, match="8 identical copies"):  # nothing split, the output split: copies
        predicted = whole.predict(Box((8, 4)))
    assert predicted.shapes == want == whole(Box(x)).shape == (64, 4)

    first = collections.namedtuple("first", "a")  # noqa: PYI024
    second = collections.namedtuple("second", "a")  # noqa: PYI024

    def unwrap(pair: Any) -> jax.Array:
        return pair.a * 2

    assert ax.shard_map(unwrap, mesh=mesh, in_specs=(first(P("i")),), out_specs=P("i"))(first(x)).shape == (8, 4)
    assert ax.shard_map(unwrap, mesh=mesh, in_specs=(second(P("i")),), out_specs=P("i"))(second(x)).shape == (8, 4)

    block = ax.shard_map(lambda a: a, mesh={"i": 8}, in_specs=P("i"), out_specs=P("i"))
    assert block.predict((8, 4)).block_shapes == (1, 4)
    with pytest.raises(ax.SpecError):
        ax.shard_map(lambda a: a, mesh=(("i", 8),), in_specs=P("i"), out_specs=P("i"))
    ax.shard_map(lambda a: a, mesh={"i": 1}, in_specs=P("i"), out_specs=P("i")).predict((8, 4))
    with pytest.raises(ax.SpecError):
        ax.shard_map(lambda a: a, mesh={"i": True}, in_specs=P("i"), out_specs=P("i"))


def test_code_compiled_anew_equal_by_value_is_new_code() -> None:
    """Autoreload gives every function newly compiled code, which may equal the old by value
    (only a default changed): a wrapper's codes are compared object by object."""

    def inner(v: jax.Array, k: int = 2) -> jax.Array:
        return v[:k]

    @functools.wraps(inner)
    def wrapper(v: jax.Array) -> jax.Array:
        return inner(v)

    kept = ax.vmap(wrapper)
    assert kept.predict((3, 4)).shapes == (3, 2)
    fresh = inner.__code__.replace()
    assert fresh is not inner.__code__ and fresh == inner.__code__
    inner.__code__, inner.__defaults__ = fresh, (1,)
    want = jax.eval_shape(jax.vmap(wrapper), sds((3, 4))).shape
    assert want == (3, 1)
    assert kept.predict((3, 4)).shapes == want
    assert ax.vmap(wrapper).predict((3, 4)).shapes == want


@pytest.mark.devices(8)
def test_shard_map_check_vma_and_axis_names_are_keyed_by_type() -> None:
    """A check_vma object whose `__eq__` says equal to any other of its kind, and axis names
    of another str type, share nothing: each transform answers, and hands JAX, its own."""
    mesh = jax.make_mesh((4,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))

    class Flag:
        def __init__(self, value: bool) -> None:
            self.value = value

        def __bool__(self) -> bool:
            return self.value

        def __eq__(self, other: object) -> bool:
            return type(other) is Flag

        def __hash__(self) -> int:
            return 0

    def total(a: jax.Array) -> jax.Array:
        return a.sum(0, keepdims=True)  # varies by device: fine only with check_vma off

    x = jax.device_put(jnp.ones((8, 2)), NamedSharding(mesh, P("i")))
    ax.shard_map(total, mesh=mesh, in_specs=P("i"), out_specs=P(), check_vma=Flag(True))
    relaxed = ax.shard_map(total, mesh=mesh, in_specs=P("i"), out_specs=P(), check_vma=Flag(False))
    want = jax.shard_map(total, mesh=mesh, in_specs=P("i"), out_specs=P(), check_vma=Flag(False))(x).shape
    assert relaxed.predict(x).shapes == want == relaxed(x).shape

    def double(a: jax.Array) -> jax.Array:
        return a * 2

    for names in ({np.str_("i")}, {"i"}):
        options: dict[str, Any] = {"mesh": mesh, "in_specs": P("i"), "out_specs": P("i"), "axis_names": names}
        ours = jax.make_jaxpr(ax.shard_map(double, **options))(x)
        assert str(ours) == str(jax.make_jaxpr(jax.shard_map(double, **options))(x))


class _Tagged:
    """A pytree whose static aux data is a numpy array: comparing two of its treedefs
    raises in JAX ("Exception raised while checking equality of metadata fields")."""

    def __init__(self, x: Any, tag: Any) -> None:
        self.x, self.tag = x, tag


jax.tree_util.register_pytree_node(_Tagged, lambda t: ((t.x,), t.tag), lambda tag, ch: _Tagged(ch[0], tag))


def test_array_valued_aux_data_keys_every_call_as_jax_does() -> None:
    """Repeated calls, a fresh instance each, with and without a signature: each equals
    jax.vmap's answer and predicts its shape (the key of a call is compared with the last
    one's, which runs the aux data's `__eq__`)."""

    def fn(t: _Tagged) -> jax.Array:
        return t.x.sum() * t.tag.sum()  # type: ignore[no-any-return]

    for g in (ax.vmap(fn), ax.vmap(fn, signature=ax.Signature((None,), output="()"))):
        for i in range(3):
            t = _Tagged(jnp.arange(6.0).reshape(2, 3) + i, np.arange(3))
            want = jax.vmap(fn)(t)
            np.testing.assert_array_equal(g(t), want)
            assert g.predict(t).shapes == want.shape

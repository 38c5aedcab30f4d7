"""`f.infer_signature(...)`: signatures inferred from example arguments, checked against JAX.

The oracle is `jax.eval_shape` of plain JAX transforms: an inferred signature, declared on
the same transform, must predict what JAX does on the example and on fresh shapes drawn
from the signature itself. Names must be the true ones wherever the questions can tell.
"""

from __future__ import annotations

import copy
import doctest
import pickle
import re
from collections.abc import Callable
from typing import Annotated, Any, NamedTuple

import jax
import jax.numpy as jnp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.sharding import AbstractMesh, AxisType
from jax.sharding import PartitionSpec as P

import axischeck as ax
import axischeck.strategies as axst
from axischeck._core._annotations import core_from_annotations
from axischeck._core._jax_compat import jax_transform_of
from axischeck._engine import _infer


def sds(shape: tuple[int, ...], dtype: Any = jnp.float32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)


def jax_shapes(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> list[tuple[int, ...]]:
    return [tuple(x.shape) for x in jax.tree_util.tree_leaves(jax.eval_shape(fn, *args, **kwargs))]


def predicted(fn: Any, *args: Any, **kwargs: Any) -> list[tuple[int, ...]]:
    return [tuple(s) for s in jax.tree_util.tree_leaves(fn.predict(*args, **kwargs).shapes)]


@pytest.fixture
def questions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the `eval_shape`s inference itself asks of JAX."""
    asked = [0]
    run = _infer._Oracle.run

    def counted(self: Any, moves: Any, batch: Any = None) -> Any:
        asked[0] += 1
        return run(self, moves, batch)

    monkeypatch.setattr(_infer._Oracle, "run", counted)
    return asked


def einsum_example(x: jax.Array, y: jax.Array, z: jax.Array) -> jax.Array:
    return jnp.einsum("ab,bc->ac", x, y) + z


# ------------------------------------------------------------------ the examples


def test_the_einsum_example(questions: list[int]) -> None:
    f = ax.vmap(einsum_example, in_axes=(0, 1, 0))
    sig = f.infer_signature((16, 8, 4), (4, 16, 2), (16, 8, 2))
    assert sig == ax.Signature("(a,b),(b,c),(a,c)->(a,c)")
    assert sig.notes == ()
    assert sig.as_code() == '"(a,b),(b,c),(a,c)->(a,c)"'
    # three size groups of two dims, each settled in two questions; the example; three draws
    assert questions[0] == 3 * 2 + 1 + 3
    g = ax.vmap(einsum_example, in_axes=(0, 1, 0), signature=sig)
    assert predicted(g, (5, 3, 7), (7, 5, 6), (5, 3, 6)) == [(5, 3, 6)]


def test_the_method_docstring_runs() -> None:
    globs = {"ax": ax, "jax": jax, "jnp": jnp}
    text = re.sub(r"^[ \t]*```.*$", "", ax.Vmapped.infer_signature.__doc__ or "", flags=re.MULTILINE)
    test = doctest.DocTestParser().get_doctest(text, globs, "infer_signature", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert test.examples
    assert runner.run(test).failed == 0


def test_a_coincidence_jax_accepts_apart_gets_two_names() -> None:
    f = ax.vmap(lambda x, y: x.sum() + y.sum())
    sig = f.infer_signature((3, 4), (3, 4))
    assert sig == ax.Signature("(a),(b)->()")
    assert len(sig.notes) == 1
    assert re.search(
        r"axis 0 of x and axis 0 of y both have size 4 .* JAX accepts them apart: 'a' and 'b'", sig.notes[0]
    )


def test_a_shared_name_beside_a_coincidence() -> None:
    """Three dims of size 4: two tied by the matmul, one independent of them."""
    f = ax.vmap(lambda x, w, v: x @ w + v.sum(), in_axes=(0, None, 0))
    sig = f.infer_signature((2, 4), (4, 3), (2, 4))
    assert sig == ax.Signature("(a),(a,b),(c)->(b)")
    assert any("axis 0 of v has size 4 like axis 0 of x and axis 0 of w" in n and "'c'" in n for n in sig.notes)


W = jnp.ones((4, 3))


def test_a_fixed_input_dim_is_a_number() -> None:
    sig = ax.vmap(lambda x: x @ W).infer_signature((5, 4))
    assert sig == ax.Signature("(4)->(3)")
    assert any(re.search(r"axis 0 of x is fixed at 4: JAX refused \d+ and \d+", n) for n in sig.notes)


def test_a_constant_output_dim_is_a_number() -> None:
    sig = ax.vmap(lambda x: x[:3] * 2).infer_signature((2, 7))
    assert sig == ax.Signature("(a)->(3)")


def test_a_hard_coded_reshape() -> None:
    sig = ax.vmap(lambda x: x.reshape(2, 4)).infer_signature((3, 8))
    assert sig == ax.Signature("(8)->(2,4)")


def test_an_output_of_n_plus_one_is_left_undeclared() -> None:
    f = ax.vmap(lambda x: jnp.concatenate([x, x[:1]]))
    sig = f.infer_signature((3, 5))
    assert sig == ax.Signature("(a)")  # inputs only
    assert sig.core.output is None
    assert any(
        re.search(r"output is left undeclared: its axis 0 has sizes 6, .* follow no input", n) for n in sig.notes
    )
    g = ax.vmap(f.__wrapped__, signature=sig)
    assert predicted(g, (2, 9)) == jax_shapes(jax.vmap(f.__wrapped__), sds((2, 9))) == [(2, 10)]


def test_one_undeclarable_output_leaf_leaves_the_others_declared() -> None:
    f = ax.vmap(lambda x: {"same": x * 2, "longer": jnp.concatenate([x, x[:1]])})
    sig = f.infer_signature((3, 5))
    assert sig == ax.Signature(("a",), output={"same": "a", "longer": None})
    assert any("output['longer'] is left unchecked" in n for n in sig.notes)


class Params(NamedTuple):
    W: jax.Array
    b: jax.Array


def dense(params: dict[str, jax.Array], x: jax.Array) -> jax.Array:
    return params["W"] @ x + params["b"]


def test_a_params_pytree_with_in_axes_none() -> None:
    f = ax.vmap(dense, in_axes=(None, 0))
    params = {"W": jnp.ones((3, 5)), "b": jnp.ones(3)}
    sig = f.infer_signature(params, jnp.ones((7, 5)))
    assert sig == ax.Signature(({"W": "a b", "b": "a"}, "b"), output="a")
    assert sig.as_code() == 'ax.Signature(({"W": "a b", "b": "a"}, "b"), output="a")'
    assert sig.as_code("annotated") == (
        'def dense(params: Annotated[dict, {"W": "a b", "b": "a"}], x: Annotated[jax.Array, "b"])'
        ' -> Annotated[jax.Array, "a"]: ...'
    )
    g = ax.vmap(dense, in_axes=(None, 0), signature=sig)
    new = ({"W": sds((6, 2)), "b": sds((6,))}, sds((4, 2)))
    assert predicted(g, *new) == jax_shapes(jax.vmap(dense, in_axes=(None, 0)), *new) == [(4, 6)]


def test_a_namedtuple_and_a_static_leaf_keep_their_structure() -> None:
    f = ax.vmap(lambda p, x, t: p.W @ x + p.b * t[0], in_axes=(None, 0, None))
    sig = f.infer_signature(Params(jnp.ones((3, 5)), jnp.ones(3)), (7, 5), (jnp.float32(2.0), "label"))
    assert sig == ax.Signature((Params(W="a b", b="a"), "b", ("", None)), output="a")  # type: ignore[arg-type]
    assert sig.as_code() == 'ax.Signature((Params(W="a b", b="a"), "b", ("", None)), output="a")'


def test_keyword_arguments_give_the_dict_form() -> None:
    def scale(x: jax.Array, *, s: jax.Array) -> jax.Array:
        return x * s

    sig = ax.vmap(scale).infer_signature((3, 4), s=(3, 4))
    assert sig == ax.Signature({"x": "a", "s": "a", "return": "a"})
    assert sig.as_code() == '{"x": "a", "s": "a", "return": "a"}'


def test_negative_axes_and_several_outputs() -> None:
    f = ax.vmap(lambda x: (x, x.sum(), x[:2]), in_axes=-1, out_axes=-1)
    sig = f.infer_signature((5, 3))
    assert sig == ax.Signature("(a)->(a),(),(2)")
    g = ax.vmap(f.__wrapped__, in_axes=-1, out_axes=-1, signature=sig)
    assert predicted(g, (9, 4)) == jax_shapes(jax.vmap(f.__wrapped__, in_axes=-1, out_axes=-1), sds((9, 4)))


def test_nested_transforms_give_the_innermost_signature() -> None:
    inner = ax.vmap(lambda x, w: x @ w, in_axes=(0, None))
    f = ax.vmap(inner, in_axes=(0, None))
    sig = f.infer_signature((2, 3, 4), (4, 5))
    assert sig == ax.Signature("(a),(a,b)->(b)")
    g = ax.vmap(ax.vmap(inner.__wrapped__, in_axes=(0, None), signature=sig), in_axes=(0, None))
    assert predicted(g, (6, 2, 3), (3, 7)) == [(6, 2, 7)]


def test_pmap_over_the_devices() -> None:
    n = jax.device_count()
    f = ax.pmap(lambda x, w: x @ w, in_axes=(0, None))
    sig = f.infer_signature(jnp.ones((n, 3), jnp.int32), (3, 2))
    assert sig == ax.Signature("(a),(a,b)->(b)")
    assert sig.as_code("jaxtyping", name="step").startswith('def step(x: Int[Array, "a"], w: Shaped[Array, "a b"])')


def test_shard_map_gives_the_per_device_signature() -> None:
    f = ax.shard_map(lambda a, b: a @ b, mesh={"x": 4}, in_specs=(P("x"), P()), out_specs=P("x"))
    sig = f.infer_signature((16, 3), (3, 2))  # blocks (4, 3) and (3, 2)
    assert sig == ax.Signature("(a,b),(b,c)->(a,c)")
    g = ax.shard_map(f.__wrapped__, mesh={"x": 4}, in_specs=(P("x"), P()), out_specs=P("x"), signature=sig)
    planned = jax.shard_map(
        f.__wrapped__,
        mesh=jax.sharding.AbstractMesh((4,), ("x",), axis_types=(jax.sharding.AxisType.Auto,)),
        in_specs=(P("x"), P()),
        out_specs=P("x"),
    )
    assert predicted(g, (8, 5), (5, 7)) == jax_shapes(planned, sds((8, 5)), sds((5, 7))) == [(8, 7)]


def test_smap_gives_the_per_device_signature() -> None:
    mesh = AbstractMesh((4,), ("x",), axis_types=(AxisType.Auto,))
    f = ax.smap(lambda a, b: jax.lax.psum(a @ b, "x"), in_axes=(0, None), out_axes=None, axis_name="x")
    with jax.sharding.use_abstract_mesh(mesh):
        sig = f.infer_signature((16, 3), (3, 2))
    assert sig == ax.Signature("(a,b),(b,c)->(a,c)")


def test_a_method() -> None:
    class Model:
        @ax.vmap(in_axes=(None, 0))
        def forward(self, x: jax.Array) -> jax.Array:
            return x.sum(-1)

    sig = Model().forward.infer_signature((3, 4, 5))
    assert sig == ax.Signature("(...),(a,b)->(a)")  # self: not an array, unchecked
    assert sig.as_code("annotated").startswith('def forward(self, x: Annotated[jax.Array, "a b"])')


def test_names_avoid_the_axis_name() -> None:
    f = ax.vmap(lambda x: x - jax.lax.pmean(x, "a"), axis_name="a")
    sig = f.infer_signature((3, 4))
    assert sig == ax.Signature("(b)->(b)")


def test_sizes_jax_refuses_together_are_kept_fixed() -> None:
    """Each input grows alone, but not both at once (the pad must stay non-negative)."""

    def padded(x: jax.Array, y: jax.Array) -> jax.Array:
        both = jnp.concatenate([x, y])
        return jnp.pad(both, (0, 20 - both.shape[0]))

    f = ax.vmap(padded)
    sig = f.infer_signature((2, 3), (2, 5))
    assert any("kept fixed" in n for n in sig.notes)
    assert sig.core.output is not None and str(sig.core.output) == "(20)"
    g = ax.vmap(padded, signature=sig)
    assert predicted(g, (2, 3), (2, 5)) == [(2, 20)]


# ---------------------------------------------------------------------- refusals


def test_arguments_predict_refuses_are_refused_the_same_way() -> None:
    f = ax.vmap(einsum_example, in_axes=(0, 1, 0))
    with pytest.raises(ax.AxisCheckError) as predict_err:
        f.predict((16, 8, 4), (5, 16, 2), (16, 8, 2))
    with pytest.raises(type(predict_err.value)) as info:
        f.infer_signature((16, 8, 4), (5, 16, 2), (16, 8, 2))
    assert "dimension 'b' disagrees" in str(info.value)


def test_symbolic_sizes_are_refused_clearly() -> None:
    (n,) = jax.export.symbolic_shape("n")
    with pytest.raises(ax.AxisCheckError, match="cannot infer a signature: JAX alone answers"):
        ax.vmap(jnp.sin).infer_signature(jax.ShapeDtypeStruct((3, n), jnp.float32))


def test_keywords_need_parameter_names() -> None:
    with pytest.raises(ax.AxisCheckError, match="keyword arguments need parameter names"):
        ax.vmap(lambda *xs, s: xs[0] * s).infer_signature((3, 4), s=(3, 4))


# ------------------------------------------------------------------ the value


def test_notes_are_not_part_of_the_value() -> None:
    sig = ax.vmap(lambda x, y: x.sum() + y.sum()).infer_signature((3, 4), (3, 4))
    plain = ax.Signature("(a),(b)->()")
    assert sig.notes and not plain.notes
    assert sig == plain and hash(sig) == hash(plain) and {plain: 1}[sig] == 1
    for other in (copy.copy(sig), copy.deepcopy(sig), pickle.loads(pickle.dumps(sig))):
        assert other == sig and other.notes == sig.notes
    with pytest.raises(AttributeError):
        sig._inference = None


# ----------------------------------------------------------------------- as code

CODE_CASES = [
    ax.Signature("(a,b),(b,c)->(a,c)"),
    ax.Signature("(n),(n)->()"),
    ax.Signature("(a,4),(...),(#b,_)"),
    ax.Signature("(*batch,c)->(*batch),(c)"),
    ax.Signature(({"W": "o i", "b": "o"}, "i"), output="o"),
    ax.Signature({"x": "a b", "params": ("a", None), "return": "b"}),
    ax.Signature(("a",), output=("a",)),
    ax.Signature(("a",), output={"y": "a", "z": None}),
]


@pytest.mark.parametrize("sig", CODE_CASES, ids=str)
def test_the_signature_code_reads_back(sig: ax.Signature) -> None:
    code = sig.as_code()
    value = eval(code, {"ax": ax})  # our own output, in a test
    assert ax.Signature(value) == sig


@pytest.mark.parametrize("style", ["annotated", "jaxtyping"])
@pytest.mark.parametrize("sig", CODE_CASES, ids=str)
def test_the_def_code_reads_back(sig: ax.Signature, style: str) -> None:
    import jaxtyping

    namespace: dict[str, Any] = {"Annotated": Annotated, "jax": jax, "Array": jax.Array, "Any": Any}
    namespace.update({k: getattr(jaxtyping, k) for k in ("Shaped", "Float", "Int", "Bool")})
    exec(sig.as_code(style, name="g"), namespace)  # our own output, in a test
    core = core_from_annotations(namespace["g"])
    assert core is not None
    assert (core.inputs, core.output) == (sig.core.inputs, sig.core.output)


def test_jaxtyping_kinds_follow_the_example_dtypes() -> None:
    f = ax.vmap(lambda i, x, m, k: (x * i, m, k), in_axes=(0, 0, 0, None))
    sig = f.infer_signature(jnp.ones((2, 3), jnp.int32), jnp.ones((2, 3)), jnp.ones((2,), bool), jax.random.key(0))
    assert sig.as_code("jaxtyping") == (
        'def f(i: Int[Array, "a"], x: Float[Array, "a"], m: Bool[Array, ""],'
        ' k: Key[Array, ""]) -> tuple[Float[Array, "a"], Bool[Array, ""], Key[Array, ""]]: ...'
    )


def test_as_code_refuses_what_it_cannot_write() -> None:
    with pytest.raises(ax.SpecError, match="as_code style must be one of"):
        ax.Signature("(a)->(a)").as_code("numpy")
    with pytest.raises(ax.SpecError, match="vmap levels"):
        ax.Signature("(a)->(a)").vmap().as_code()
    with pytest.raises(ax.SpecError, match="identifier"):
        ax.Signature("(a)->(a)").as_code("annotated", name="not a name")


# ------------------------------------------------------------- the property

LETTERS = "pqrs"


POSTS = ("none", "none", "append", "double", "constant")


@st.composite
def einsum_cases(draw: st.DrawFn) -> tuple[str, list[str], str, dict[str, int], tuple[int | None, ...], int, str]:
    n_in = draw(st.integers(1, 3))
    ins = ["".join(draw(st.lists(st.sampled_from(LETTERS), min_size=0, max_size=3, unique=True))) for _ in range(n_in)]
    used = sorted(set("".join(ins)))
    out = "".join(draw(st.permutations(used))[: draw(st.integers(0, len(used)))])
    sizes = {c: draw(st.integers(2, 4)) for c in used}  # small: coincidences are common
    axes = [draw(st.sampled_from([None, *range(-len(s) - 1, len(s) + 1)])) for s in ins]
    if all(a is None for a in axes):
        axes[0] = 0
    post = draw(st.sampled_from(POSTS))
    return ",".join(ins) + "->" + out, ins, out, sizes, tuple(axes), draw(st.integers(2, 4)), post


def _canonical(ins: list[str], out: str) -> ax.Signature:
    """The true signature, its letters renamed in order of first appearance (as inference names)."""
    order = {c: ascii for c, ascii in zip(dict.fromkeys("".join(ins)), "abcdefgh", strict=False)}
    return ax.Signature(tuple(" ".join(order[c] for c in s) for s in ins), output=" ".join(order[c] for c in out))


def _function(spec: str, post: str, first: tuple[int, ...]) -> Callable[..., jax.Array]:
    """An einsum, then maybe an output of n + 1 or 2 n rows, or a closed-over constant that
    fixes every dim of the first input."""
    constant = jnp.ones(first)

    def fun(*xs: jax.Array) -> jax.Array:
        if post == "constant":
            xs = (xs[0] * constant, *xs[1:])
        r = jnp.einsum(spec, *xs)
        if post == "append" and r.ndim:
            return jnp.concatenate([r, r[:1]])
        if post == "double" and r.ndim:
            return jnp.concatenate([r, r])
        return r

    return fun


@settings(max_examples=60)
@given(einsum_cases(), st.data())
def test_inferred_signatures_agree_with_jax(case: Any, data: st.DataObject) -> None:
    spec, ins, out, sizes, in_axes, batch, post = case
    per_example = [tuple(sizes[c] for c in s) for s in ins]
    fun = _function(spec, post, per_example[0])
    args = []
    for shape, axis in zip(per_example, in_axes, strict=True):
        if axis is not None:
            p = axis if axis >= 0 else axis + len(shape) + 1
            shape = shape[:p] + (batch,) + shape[p:]
        args.append(shape)
    sig = ax.vmap(fun, in_axes=in_axes).infer_signature(*args)

    # Exact names unless two letters that each name several dims share a size: the
    # questions cannot split those apart, and a single name for both is still right.
    by_size: dict[int, int] = {}
    for c in sizes:
        if "".join(ins).count(c) >= 2:
            by_size[sizes[c]] = by_size.get(sizes[c], 0) + 1
    if post == "none" and all(n < 2 for n in by_size.values()):
        assert sig == _canonical(ins, out), (spec, args, sig.notes)
    if post in ("append", "double") and out:
        assert sig.core.output is None and sig.notes, (spec, args, str(sig))

    declared = ax.vmap(fun, in_axes=in_axes, signature=sig)
    for _ in range(2):  # fresh shapes from the inferred signature itself
        shapes = data.draw(axst.shapes_for(sig, in_axes=in_axes, min_side=2, max_side=6))
        want = jax_shapes(jax.vmap(fun, in_axes=in_axes), *[sds(s) for s in shapes])
        assert predicted(declared, *shapes) == want, (spec, shapes, str(sig))


# ------------------------------------------------- sizes that change together


def test_an_output_dim_that_follows_the_batch_size_gets_the_axis_name() -> None:
    """`all_gather` over the vmap axis gives each example the whole batch: the batch size is
    varied too, so the output is `(i, a)` and the pasted signature takes any batch."""
    f = ax.vmap(lambda x: jax.lax.all_gather(x, "i"), axis_name="i")
    sig = f.infer_signature((16, 3))
    assert sig == ax.Signature("(a)->(i,a)")
    g = ax.vmap(f.__wrapped__, axis_name="i", signature=sig)
    for batch in (8, 16, 5):
        x = sds((batch, 3))
        assert predicted(g, x) == jax_shapes(jax.vmap(f.__wrapped__, axis_name="i"), x) == [(batch, batch, 3)]


def test_equal_sizes_that_change_in_pairs_get_a_name_per_pair() -> None:
    f = ax.vmap(lambda x, y, z, w: (x * y).sum() + (z * w).sum())
    sig = f.infer_signature((2, 4), (2, 4), (2, 4), (2, 4))
    assert sig == ax.Signature("(a),(a),(b),(b)->()")
    assert any(re.search(r"JAX accepts them changed in 2 groups .*: 'a' and 'b'", n) for n in sig.notes)
    g = ax.vmap(f.__wrapped__, signature=sig)
    args = (sds((2, 4)), sds((2, 4)), sds((2, 5)), sds((2, 5)))
    assert predicted(g, *args) == jax_shapes(jax.vmap(f.__wrapped__), *args) == [(2,)]
    # the pairs found by asking JAX, not by position
    h = ax.vmap(lambda x, y, z, w: (x * z).sum() + (y * w).sum())
    assert h.infer_signature((2, 4), (2, 4), (2, 4), (2, 4)) == ax.Signature("(a),(b),(a),(b)->()")


def test_sizes_tied_at_an_offset_are_written_so_other_lengths_pass() -> None:
    """A trajectory of n steps and its n + 1 values: the signature cannot write n + 1, so
    the longer dim is `_` and a note names the tie; the pasted signature takes other lengths."""
    f = ax.vmap(lambda t, v: t + v[1:])
    sig = f.infer_signature((2, 100), (2, 101))
    assert sig == ax.Signature("(a),(_)->(a)")
    assert any(
        re.search(r"axis 0 of v \(size 101\) changes with axis 0 of t \(size 100\) as 'a' \+ 1", n) for n in sig.notes
    )
    assert not any("fixed at" in n for n in sig.notes)
    g = ax.vmap(f.__wrapped__, signature=sig)
    assert predicted(g, (3, 50), (3, 51)) == jax_shapes(jax.vmap(f.__wrapped__), sds((3, 50)), sds((3, 51)))


MAPPED_MODULE = """\
import jax
import axischeck as ax


def f(x, y):
    return x @ y


by_jax = jax.vmap(f)
jitted_by_jax = jax.jit(jax.vmap(f))
jitted_ours = jax.jit(ax.vmap(f))
"""


def test_the_command_line_refuses_a_function_jax_already_mapped(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Mapping a `jax.vmap` result again would print the batched function's signature as
    the per-example one: the command says what to point it at instead."""
    from axischeck._cli import run

    (tmp_path / "mapped_module.py").write_text(MAPPED_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    shapes = ["8x3x4", "8x4x5"]
    for name, inside in (("by_jax", ""), ("jitted_by_jax", " inside jax.jit")):
        assert run(["infer", f"mapped_module:{name}", *shapes]) == 2
        err = capsys.readouterr().err
        assert f"mapped_module:{name} is already mapped by jax.vmap{inside}" in err
        assert "point it at mapped_module:f" in err
    # jit around an axischeck transform: the transform inside answers
    assert run(["infer", "mapped_module:jitted_ours", *shapes]) == 0
    assert capsys.readouterr().out == '"(a,b),(b,c)->(a,c)"\n'
    assert run(["infer", "mapped_module:f", *shapes]) == 0
    assert capsys.readouterr().out == '"(a,b),(b,c)->(a,c)"\n'
    assert jax_transform_of(jax.pmap(abs)) == "jax.pmap"
    assert jax_transform_of(jax.jit(abs)) is None and jax_transform_of(jnp.sum) is None


class _NoRepr:
    def __repr__(self) -> str:
        raise RuntimeError("this object has no repr")


@jax.tree_util.register_pytree_node_class
class _Box:
    """A user's pytree node whose repr (and its aux data's) raises."""

    def __init__(self, v: Any, meta: Any = None) -> None:
        self.v, self.meta = v, _NoRepr() if meta is None else meta

    def tree_flatten(self) -> tuple[tuple[Any], Any]:
        return (self.v,), self.meta

    @classmethod
    def tree_unflatten(cls, meta: Any, children: Any) -> _Box:
        return cls(children[0], meta)

    def __repr__(self) -> str:
        raise RuntimeError("this box has no repr")


def test_a_signature_over_a_pytree_whose_repr_fails_is_written_by_axischeck() -> None:
    f = ax.vmap(lambda b: b.v.sum(axis=-1))
    sig = f.infer_signature(_Box(sds((3, 4, 5))))
    for text in (repr(sig), str(sig), sig.as_code(), sig.as_code("annotated")):
        assert "_Box(" in text and "(a, b)" in text
    assert str(sig) == "_Box([<flat index 0>]: (a, b)) -> (a)"


def test_the_signature_code_is_source_to_paste_and_the_value_is_passed_as_it_is() -> None:
    """`as_code()` is Python source, like the def-line styles: pasted into a file, it is the
    `signature=` argument; in code, the inferred value itself is passed."""
    f = ax.vmap(einsum_example, in_axes=(0, 1, 0))
    sig = f.infer_signature((16, 8, 4), (4, 16, 2), (16, 8, 2))
    pasted = eval(sig.as_code(), {"ax": ax})  # our own output, as the user's file would read it
    for declared in (pasted, sig):
        g = ax.vmap(einsum_example, in_axes=(0, 1, 0), signature=declared)
        assert predicted(g, (5, 3, 7), (7, 5, 6), (5, 3, 6)) == [(5, 3, 6)]


def test_a_function_jax_already_mapped_is_refused_not_mapped_twice() -> None:
    """`ax.vmap(jax.vmap(f))`: inferring would describe the batched function as one
    example's; axischeck's own nest is followed to its innermost function instead."""
    with pytest.raises(ax.SpecError, match="already mapped by jax.vmap"):
        ax.vmap(jax.vmap(lambda x: x.sum())).infer_signature((4, 3, 2))
    assert str(ax.vmap(ax.vmap(lambda x: x.sum())).infer_signature((4, 3, 2))) == "(a) -> ()"

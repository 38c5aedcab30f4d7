"""Linear in the leaves: the shortcuts that make a 16,000-leaf tree cheap agree with JAX's
own tree functions, and the work done per leaf stays bounded (counted, never timed: the
times live in `benchmarks/bench.py --only leaves`)."""

from __future__ import annotations

import collections
import re
from typing import Any, NamedTuple

import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import axischeck as ax
from axischeck._core import _dims, _explain
from axischeck._core._trees import broadcast_prefix, labelled_leaves, walk_prefix
from axischeck._engine import _unify


class Pair(NamedTuple):
    a: Any
    b: Any


@jax.tree_util.register_pytree_with_keys_class
class Box:
    """A registered node with keys of its own."""

    def __init__(self, inside: Any) -> None:
        self.inside = inside

    def tree_flatten_with_keys(self) -> tuple[list[tuple[Any, Any]], None]:
        return [(jax.tree_util.GetAttrKey("inside"), self.inside)], None

    @classmethod
    def tree_unflatten(cls, aux: None, children: list[Any]) -> Box:
        return cls(children[0])


LEAVES = st.one_of(
    st.integers(-3, 3),
    st.floats(allow_nan=False),
    st.booleans(),
    st.text(max_size=3),
    st.builds(lambda n: jax.ShapeDtypeStruct((n, 2), np.float32), st.integers(0, 3)),
    st.builds(lambda n: np.zeros((n,)), st.integers(0, 3)),
    st.just(ax.Shape((4, 3))),
    st.just(object()),
)
KEYS = st.one_of(st.text(max_size=3), st.integers(-2, 5))


def _trees(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=3), children, max_size=4),
        st.dictionaries(st.integers(-2, 5), children, max_size=4),
        st.dictionaries(KEYS, children, max_size=3),  # mixed keys: JAX cannot sort them
        st.dictionaries(KEYS, children, max_size=3).map(collections.OrderedDict),
        st.builds(Pair, children, children),
        st.builds(Box, children),
        st.just(None),
    )


TREES = st.recursive(LEAVES, _trees, max_leaves=20)


def _jax_labels(tree: Any, prefix: str) -> tuple[list[str], list[Any]]:
    with_path, _ = jax.tree_util.tree_flatten_with_path(tree)
    return [prefix + jax.tree_util.keystr(p) for p, _ in with_path], [leaf for _, leaf in with_path]


@given(TREES)
def test_labelled_leaves_are_jax_paths(tree: Any) -> None:
    """The walk gives JAX's leaves in JAX's order, labelled as `keystr` labels them."""
    try:
        want = _jax_labels(tree, "params")
    except (TypeError, ValueError):  # keys JAX cannot sort: the walk refuses as JAX does
        with pytest.raises((TypeError, ValueError)):
            labelled_leaves(tree, "params")
        return
    labels, leaves = labelled_leaves(tree, "params")
    assert labels == want[0]
    assert all(a is b for a, b in zip(leaves, want[1], strict=True))


def _prefixes(tree: Any) -> st.SearchStrategy[Any]:
    """Specs for `tree`: prefixes of it (a leaf spec cuts a subtree), and near misses
    (a list for a tuple, a key dropped or added, another length)."""
    leaf_spec = st.sampled_from([0, 1, None])
    kind = type(tree)
    if kind in (list, tuple) or kind is Pair or kind is dict or kind is collections.OrderedDict:
        children = list(tree.values()) if isinstance(tree, dict) else list(tree)
        if not children:
            return st.one_of(leaf_spec, st.just(tree))
        subs = st.tuples(*(_prefixes(c) for c in children))

        def rebuild(parts: tuple[Any, ...], change: int) -> Any:
            if kind is Pair:
                node: Any = Pair(*parts)
                return tuple(node) if change == 1 else node
            if isinstance(tree, dict):
                node = kind(zip(tree.keys(), parts, strict=True))
                if change == 1:
                    node.popitem()
                if change == 2:
                    node["extra"] = 0
                return node
            node = kind(parts)
            if change == 1:
                return list(node) if kind is tuple else tuple(node)
            return node[:-1] if change == 2 else node

        return st.one_of(leaf_spec, st.builds(rebuild, subs, st.sampled_from([0, 0, 0, 1, 2])))
    return leaf_spec


@given(st.data())
def test_broadcast_prefix_agrees_with_the_node_by_node_walk(data: st.DataObject) -> None:
    """The linear path (JAX cuts the tree at the spec's leaves) pairs the same leaves, and
    finds a mismatch exactly where the walk does (the walk then says how)."""
    tree = data.draw(TREES)
    spec = data.draw(_prefixes(tree))

    def is_axis(x: object) -> bool:
        return x is None or type(x) is int

    def outcome(pair: Any) -> Any:
        try:
            return pair(spec, tree, is_axis)
        except Exception as err:  # dict keys JAX cannot sort: both refuse alike
            return type(err)

    assert outcome(broadcast_prefix) == outcome(walk_prefix)


def _spec(n: int) -> dict[str, Any]:
    return {"x": "i", "params": {f"w{k:05d}": "o i" for k in range(n)}, "return": "i"}


def _model(n: int) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    spec = _spec(n)
    params = dict.fromkeys(spec["params"], jax.ShapeDtypeStruct((4, 3), np.float32))

    def f(x: jax.Array, params: dict[str, jax.Array]) -> jax.Array:
        return x

    return ax.vmap(f, in_axes=(0, None), signature=spec), spec, params


def test_a_repeated_dim_string_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    parse = _dims.parse_array_spec

    def counting(text: str) -> _dims.ArraySpec:
        calls.append(text)
        return parse(text)

    monkeypatch.setattr("axischeck._core._spec.parse_array_spec", counting)
    sig = ax.Signature(_spec(2000))
    assert sorted(calls) == ["i", "i", "o i"]  # x, the return, and the params' one text
    assert str(sig).count("(o, i)") == 2000


def test_unify_makes_places_only_for_what_it_keeps() -> None:
    """A place is made for a new binding or a conflict, not for every dim checked."""
    made: list[tuple[int | None, Any]] = []
    unifier = _unify.Unifier()
    spec = _dims.parse_array_spec("o i")

    def place(axis: int | None, size: Any) -> ax.Place:
        made.append((axis, size))
        return ax.Place("w", None, axis, size)

    for _ in range(1000):
        assert unifier.unify(spec, ax.Shape((4, 3)), place, "w") is None
    assert made == [(0, 4), (1, 3)]
    conflict = unifier.unify(spec, ax.Shape((4, 5)), place, "v")
    assert conflict is not None and conflict.symbol == "i"
    assert made[-1] == (1, 5)


def test_an_error_among_many_leaves_formats_only_the_rows_it_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    """One bad leaf of 4000: the table shows the conflict's row alone, and only the rows
    shown are ever formatted (the rest are counted)."""
    checked, _, params = _model(4000)
    bad = params | {"w02000": jax.ShapeDtypeStruct((4, 5), np.float32)}
    formatted: list[int] = []
    table = _explain.table

    def counting(rows: Any, limit: int | None = None) -> str:
        columns = rows.columns

        def counted(shown: Any) -> list[list[str]]:
            formatted.append(len(shown))
            return columns(shown)

        return table(type(rows)(rows.header, rows.count, counted, rows.marked), limit)

    monkeypatch.setattr(_explain, "table", counting)
    with pytest.raises(ax.AxisCheckError) as info:
        checked.predict(jax.ShapeDtypeStruct((2, 3), np.float32), bad)
    text = str(info.value)
    rows = [line for line in text.splitlines() if line.lstrip().startswith(("x ", "params["))]
    assert len(rows) == 1  # the conflict
    assert re.search(r"params\['w02000'\].*<-- conflicts with i=3 from x", text)
    assert "... and 4000 more rows (the prediction's table has them all)" in text
    assert formatted and max(formatted) == 1


def test_an_error_among_many_leaves_matches_only_the_labels_its_text_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Which rows an error names is a whole-word match of each label in the problem's
    text: asked only of the labels the text holds, not compiled into a pattern per row
    (16,000 rows took seconds, most of it compiling)."""
    f = ax.vmap(lambda p: p["k0"], signature=ax.Signature(("n",), output="n"))
    bad = {f"k{i}": (3, 2) for i in range(4000)} | {"k0": (4, 2)}  # one leaf with another batch size
    searched: list[str] = []
    search = _explain.re.search

    def counting(pattern: str, text: str) -> Any:
        searched.append(pattern)
        return search(pattern, text)

    monkeypatch.setattr(_explain.re, "search", counting)
    with pytest.raises(ax.AxisCheckError) as info:
        f.predict(bad)
    assert "p['k0']" in str(info.value)
    assert len(searched) <= 4, len(searched)


def test_the_whole_table_of_many_leaves() -> None:
    """`str(prediction)` shows every leaf, aligned, once each."""
    checked, _, params = _model(3000)
    pred = checked.predict(jax.ShapeDtypeStruct((2, 3), np.float32), params)
    lines = str(pred).splitlines()
    rows = [line for line in lines if line.startswith("params[")]
    assert len(rows) == 3000
    assert len({line.index("None") for line in rows}) == 1  # one column, aligned
    assert rows[0] == "params['w00000']  (4, 3)         None     (4, 3)       (o, i)     o=4  i=3"


def test_a_signature_table_is_kept_by_column() -> None:
    """The signature's rows are five tuples however many leaves there are; read as rows,
    they are the same rows."""
    from axischeck._core._steps import BaseStep, SpecRow, SpecRows

    checked, _, params = _model(3000)
    pred = checked.predict(jax.ShapeDtypeStruct((2, 3), np.float32), params)
    base = next(s for s in pred.steps if isinstance(s, BaseStep))
    assert isinstance(base.args, SpecRows) and len(base.args) == 3001
    assert base.args[1] == SpecRow("params['w00000']", ax.Shape((4, 3)), "(o, i)", "o=4  i=3")
    assert SpecRows.of(list(base.args)) == base.args
    assert BaseStep("signature", tuple(base.args), ()) == BaseStep("signature", base.args, ())


def test_unify_returns_the_first_problem_and_reads_no_further(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Conflict carries no table, so `Signature.unify` stops at the first problem in
    argument order (here x's rank), never rendering a table nor reading the leaves after
    it (a later leaf that is not an array does not displace it)."""
    spec = _spec(3000)
    sig = ax.Signature(spec)
    params: dict[str, Any] = dict.fromkeys(spec["params"], (4, 3)) | {"w02999": "not an array"}
    monkeypatch.setattr(_explain, "table", lambda *a, **k: pytest.fail("a Conflict has no table"))
    conflict = sig.unify((5, 3), params)
    assert isinstance(conflict, _unify.Conflict)
    assert conflict.problem == "x has per-example shape (5, 3) of rank 2, but its signature (i) needs rank 1"
    ok = sig.unify((3,), params | {"w02999": (4, 3)})
    assert isinstance(ok, _unify.Bindings) and dict(ok.sizes) == {"i": 3, "o": 4}


def test_batch_sizes_that_disagree_make_a_place_per_size_not_per_leaf(monkeypatch: pytest.MonkeyPatch) -> None:
    """One leaf of 3000 with another batch size: the message names the axes by size, the
    most common first, the first few of a size and how many more (as JAX's message sums
    up the size most axes have), so the odd one stays readable; only the first axis of
    each size becomes a `Place`. The fix search's candidates whose sizes disagree too are
    refused without any list."""
    from axischeck._core._leaves import Leaf
    from axischeck._engine import _levels

    listed: list[int] = []
    disagreement = _levels._disagreement

    def listing(*args: Any) -> tuple[str, tuple[ax.Place, ...]]:
        listed.append(len(args[2]))
        return disagreement(*args)

    monkeypatch.setattr(_levels, "_disagreement", listing)

    made: list[str] = []
    place = Leaf.place

    def counting(self: Leaf, axis: int | None, size: Any, unit: str = "per-example") -> ax.Place:
        made.append(self.label)
        return place(self, axis, size, unit)

    monkeypatch.setattr(Leaf, "place", counting)
    names = [f"w{k:05d}" for k in range(3000)]
    params = dict.fromkeys(names, jax.ShapeDtypeStruct((8, 4, 3), np.float32))
    params["w01500"] = jax.ShapeDtypeStruct((9, 4, 3), np.float32)
    f = ax.vmap(lambda x, params: x, in_axes=(0, 0))
    with pytest.raises(ax.AxisCheckError) as info:
        f.predict(jax.ShapeDtypeStruct((8, 3), np.float32), params)
    err = info.value
    assert err.problem == (
        "the mapped axes disagree on the batch size: size 8 at axis 0 of x, axis 0 of params['w00000'],"
        " axis 0 of params['w00001'], axis 0 of params['w00002'], axis 0 of params['w00003'] and 2995 more"
        " axes; size 9 at axis 0 of params['w01500']"
    )
    assert [(p.arg, p.size) for p in err.places] == [("x", 8), ("params['w01500']", 9)]
    assert made.count("params['w00001']") == 0  # the agreeing leaves are text, not Places
    assert listed == [3001]  # the error shown; not in_axes=(1, 0) nor (None, 0), tried for a fix
    assert [s.text for s in err.suggestions] == ["in_axes=(0, None) would leave params unmapped"]


def test_a_levels_rows_are_kept_by_column() -> None:
    """A vmap level's argument rows are four tuples however many leaves there are; read
    as rows, they are the same rows, and steps given either form compare alike."""
    from axischeck._core._steps import ArgRow, ArgRows, MapStep

    checked, _, params = _model(3000)
    pred = checked.predict(jax.ShapeDtypeStruct((2, 3), np.float32), params)
    step = next(s for s in pred.steps if isinstance(s, MapStep))
    assert isinstance(step.args, ArgRows) and len(step.args) == 3001
    assert step.args[0] == ArgRow("x", ax.Shape((2, 3)), 0, ax.Shape((3,)))
    assert step.args[1] == ArgRow("params['w00000']", ax.Shape((4, 3)), None, ax.Shape((4, 3)))
    assert ArgRows.of(list(step.args)) == step.args
    rows = tuple(step.args)
    assert MapStep("vmap", "B", 2, rows) == MapStep("vmap", "B", 2, step.args)
    assert hash(MapStep("vmap", "B", 2, rows)) == hash(MapStep("vmap", "B", 2, step.args))


@pytest.mark.parametrize(("agreeing", "rest"), [(5, ""), (6, " and 1 more axis"), (9, " and 4 more axes")])
def test_a_batch_size_names_its_first_axes_and_counts_the_rest(agreeing: int, rest: str) -> None:
    """Up to five axes per size are named (every one in a small call), then counted."""
    sizes = [8] * agreeing + [9]
    f = ax.vmap(lambda *xs: xs[0])
    with pytest.raises(ax.ArgumentError) as info:
        f.predict(*(jax.ShapeDtypeStruct((n, 2), np.float32) for n in sizes))
    named = ", ".join(f"axis 0 of xs[{i}]" for i in range(min(agreeing, 5)))
    assert f"size 8 at {named}{rest}; size 9 at axis 0 of xs[{agreeing}]" in info.value.problem


def test_a_failing_predict_labels_its_call_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fix search tries its options on the call the error was found in: the leaves
    are labelled once, not again for the search (20-45 ms at 16,000 leaves)."""
    from axischeck._engine import _predictor

    labelled: list[int] = []
    label_call = _predictor.label_call

    def counting(*args: Any, **kwargs: Any) -> Any:
        labelled.append(1)
        return label_call(*args, **kwargs)

    monkeypatch.setattr(_predictor, "label_call", counting)
    checked, _, params = _model(100)
    x = jax.ShapeDtypeStruct((2, 3), np.float32)
    checked.predict(x, params)  # builds the plan (which labels the call once)
    labelled.clear()
    with pytest.raises(ax.ArgumentError):
        checked.predict(x, params | {"w00050": jax.ShapeDtypeStruct((4, 5), np.float32)})
    assert len(labelled) == 1


def test_a_signatures_text_is_written_once() -> None:
    """A signature's text is made once, however many errors name it."""
    sig = ax.Signature(_spec(1000))
    assert str(sig.core) is str(sig.core)

"""Differential property tests: `axischeck.shard_map` against real `jax.shard_map` (JAX 0.10.2).

Random 1-D and 2-D meshes (real ones over the 8 forced CPU devices, and abstract ones
larger than this machine), random PartitionSpecs (too long, uneven, duplicate or unknown
axes, tuple entries, static `None` entries, a single spec for every argument), random
functions (elementwise, reductions, collectives with random axes and tiling) and random
out_specs. The property (API.md "Agreement with JAX", issue 4):

* if `jax.eval_shape(jax.shard_map(f, ...), *args)` succeeds, `predict` gives its shapes,
  and the per-device blocks the function really saw and returned;
* if JAX raises (any type), constructing the axischeck transform or `predict` raises
  `ax.AxisCheckError`.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from jax import lax
from jax.sharding import AbstractMesh, Mesh
from jax.sharding import PartitionSpec as P

import axischeck as ax
from conftest import cpu_devices, cpu_mesh_or_none

AUTO = jax.sharding.AxisType.Auto  # said wherever a mesh is built: the defaults differ across JAX versions

DIMS = [1, 2, 3, 4, 6, 8, 12, 16, 24]
REAL_MESHES = [
    ((8,), ("x",)),
    ((4,), ("x",)),
    ((2,), ("x",)),
    ((4, 2), ("x", "y")),
    ((2, 4), ("x", "y")),
    ((2, 2), ("x", "y")),
    ((1, 8), ("x", "y")),
]
BIG_MESHES = [((16,), ("x",)), ((16, 4), ("x", "y")), ((64, 2), ("x", "y"))]


def _equality_raises(entry: Any) -> bool:
    """Whether `entry == ("x", "y")` cannot be read as a bool (a numpy scalar gives an array)."""
    try:
        bool(entry == ("x", "y"))
    except Exception:
        return True
    return False


@pytest.fixture(autouse=True, scope="module")
def _no_live_spec_compares_as_an_array() -> Iterator[None]:
    """JAX 0.10.2 interns PartitionSpecs: `P(*entries)` may compare its entries with those
    of any live spec, and a live `P(np.int64(1))` (JAX's pmap makes one of a numpy
    axis_name, and its caches keep it) then makes `P(("x", "y"))` raise, or not, by hash.
    Start with JAX's caches empty, and fail here, not at random, if such a spec remains."""
    jax.clear_caches()
    gc.collect()
    live = [o for o in gc.get_objects() if type(o) is P and any(_equality_raises(e) for e in o.partitions)]
    assert not live, f"specs kept alive by an earlier test would make P(...) raise at random: {live}"
    yield


def real_mesh(sizes: tuple[int, ...], names: tuple[str, ...]) -> Mesh:
    n = int(np.prod(sizes))
    return Mesh(np.array(cpu_devices(n)).reshape(sizes), names, axis_types=(AUTO,) * len(names))


@st.composite
def meshes(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 4)) == 0:
        sizes, names = draw(st.sampled_from(BIG_MESHES))
        return AbstractMesh(sizes, names, axis_types=(AUTO,) * len(names))
    sizes, names = draw(st.sampled_from(REAL_MESHES))
    return real_mesh(sizes, names)


@st.composite
def specs(draw: st.DrawFn, names: tuple[str, ...], rank: int) -> Any:
    pool = list(names) + ["z"] * draw(st.sampled_from([0, 0, 0, 1]))
    entries: list[Any] = []
    for _ in range(draw(st.integers(0, rank + (1 if draw(st.integers(0, 5)) == 0 else 0)))):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            entries.append(None)
        elif kind == 3 and len(pool) > 1:
            entries.append(tuple(draw(st.lists(st.sampled_from(pool), min_size=2, max_size=2))))
        else:
            entries.append(draw(st.sampled_from(pool)))
    return P(*entries)


@dataclass(frozen=True)
class Body:
    """A per-device function from a small menu, described for failure output."""

    text: str
    fn: Callable[..., Any]


@st.composite
def bodies(draw: st.DrawFn, sizes: dict[str, int], rank: int, nargs: int) -> Body:
    names = tuple(sizes)
    kind = draw(
        st.sampled_from(
            [
                "id",
                "plus",
                "sum0",
                "psum",
                "pmean",
                "gather",
                "gather_invariant",
                "scatter",
                "all_to_all",
                "pswapaxes",
                "ppermute",
                "index",
            ]
        )
    )
    name = draw(st.sampled_from(names))
    axis = draw(st.integers(0, max(rank, 1)))
    tiled = draw(st.booleans())
    extra = "" if nargs == 1 else " + jnp.sum(b)"

    def rest(args: tuple[Any, ...]) -> Any:
        return sum(jnp.sum(b) for b in args[1:])

    if kind == "id":
        return Body("a", lambda *a: a[0])
    if kind == "plus":
        return Body(f"a * 2{extra}", lambda *a: a[0] * 2 + rest(a))
    if kind == "sum0":
        return Body("a.sum(0)", lambda *a: a[0].sum(0))
    if kind == "psum":
        over = tuple(draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True)))
        return Body(f"psum(a, {over})", lambda *a: lax.psum(a[0], over))
    if kind == "pmean":
        return Body(f"pmean(a, {name!r})", lambda *a: lax.pmean(a[0], name))
    if kind == "pswapaxes":
        return Body(f"pswapaxes(a, {name!r}, {axis})", lambda *a: lax.pswapaxes(a[0], name, axis))
    if kind == "ppermute":
        n = sizes[name]
        perm = [(i, (i + 1) % n) for i in range(n)]
        return Body(f"ppermute(a, {name!r}, shift by 1)", lambda *a: lax.ppermute(a[0], name, perm))
    if kind == "gather_invariant":  # vma-aware: the result may be promised replicated
        return Body(
            f"all_gather(a, {name!r}, axis={axis}, tiled={tiled}, to='invarying')",
            lambda *a: lax.all_gather(a[0], name, axis=axis, tiled=tiled, to="invarying"),
        )
    if kind == "gather":
        return Body(
            f"all_gather(a, {name!r}, axis={axis}, tiled={tiled})",
            lambda *a: lax.all_gather(a[0], name, axis=axis, tiled=tiled),
        )
    if kind == "scatter":
        return Body(
            f"psum_scatter(a, {name!r}, scatter_dimension={axis}, tiled={tiled})",
            lambda *a: lax.psum_scatter(a[0], name, scatter_dimension=axis, tiled=tiled),
        )
    if kind == "all_to_all":
        concat = draw(st.integers(0, max(rank - 1, 0)))
        return Body(
            f"all_to_all(a, {name!r}, {axis}, {concat}, tiled={tiled})",
            lambda *a: lax.all_to_all(a[0], name, axis, concat, tiled=tiled),
        )
    return Body(f"a + axis_index({name!r})", lambda *a: a[0] + lax.axis_index(name))


@dataclass(frozen=True)
class Case:
    mesh: Any
    shapes: tuple[tuple[int, ...], ...]
    in_specs: Any
    out_specs: Any
    body: Body
    check_vma: bool

    def __repr__(self) -> str:
        return (
            f"Case(mesh={dict(self.mesh.shape)}, shapes={self.shapes}, in_specs={self.in_specs},"
            f" out_specs={self.out_specs}, body={self.body.text}, check_vma={self.check_vma})"
        )


def _split(mesh: Any, entry: Any) -> int:
    axes = () if entry is None else entry if isinstance(entry, tuple) else (entry,)
    sizes = dict(mesh.shape)
    return int(np.prod([sizes.get(a, 1) for a in axes]))


@st.composite
def sharded_shape(draw: st.DrawFn, mesh: Any, min_rank: int) -> tuple[tuple[int, ...], Any]:
    """A spec, and a shape that mostly fits it (uneven dims a fifth of the time)."""
    rank = draw(st.integers(min_rank, 3))
    spec = draw(specs(tuple(mesh.axis_names), rank))
    dims = []
    for d in range(rank):
        fits = d < len(spec) and draw(st.integers(0, 4)) > 0
        dims.append(
            _split(mesh, spec[d]) * draw(st.sampled_from([1, 1, 2, 3])) if fits else draw(st.sampled_from(DIMS))
        )
    return tuple(dims), spec


@st.composite
def cases(draw: st.DrawFn) -> Case:
    mesh = draw(meshes())
    names = tuple(mesh.axis_names)
    nargs = draw(st.integers(1, 2))
    drawn = [draw(sharded_shape(mesh, 1 if k == 0 else 0)) for k in range(nargs)]
    shapes = tuple(shape for shape, _ in drawn)
    arg_specs = [spec for _, spec in drawn]
    form = draw(st.sampled_from(["tuple", "tuple", "tuple", "single", "static", "short"]))
    if form == "single":
        in_specs: Any = arg_specs[0]
    elif form == "static" and nargs == 2:
        in_specs = (arg_specs[0], None)
    elif form == "short" and nargs == 2:
        in_specs = (arg_specs[0],)
    else:
        in_specs = tuple(arg_specs)
    body = draw(bodies(dict(mesh.shape), len(shapes[0]), nargs))
    out_specs = arg_specs[0] if draw(st.booleans()) else draw(specs(names, len(shapes[0])))
    return Case(mesh, shapes, in_specs, out_specs, body, draw(st.booleans()))


def structs(shapes: tuple[tuple[int, ...], ...]) -> list[jax.ShapeDtypeStruct]:
    return [jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes]


def jax_answer(case: Case) -> tuple[Any, list[Any], list[Any]] | Exception:
    """JAX's global output, and the blocks the function saw and returned."""
    seen: list[Any] = []
    returned: list[Any] = []

    def f(*args: Any) -> Any:
        seen[:] = [tuple(x.shape) for x in args]
        out = case.body.fn(*args)
        returned[:] = [tuple(out.shape)]
        return out

    try:
        g = jax.shard_map(f, mesh=case.mesh, in_specs=case.in_specs, out_specs=case.out_specs, check_vma=case.check_vma)
        return jax.eval_shape(g, *structs(case.shapes)), seen, returned
    except Exception as err:  # any type: JAX's verdict is "raises"
        return err


def verdicts_agree(described: str, want: Any, predict: Callable[[], Any]) -> Any:
    """`predict()` raises an AxisCheckError exactly where JAX raised (`want` is then the
    exception); otherwise its prediction is returned for the caller to compare."""
    note = event if currently_in_test_context() else (lambda _: None)
    try:
        pred = predict()
    except ax.AxisCheckError as err:
        note("both raise" if isinstance(want, Exception) else "axischeck only")
        assert isinstance(want, Exception), f"{described}: axischeck raised, JAX gives {want}:\n{err}"
        return None
    note("both agree")
    assert not isinstance(want, Exception), (
        f"{described}: JAX raises {type(want).__name__}: {want}\nbut predicted {pred!r}"
    )
    return pred


def duplicate_in_spec_axes(case: Case) -> bool:
    """A mesh axis twice in one in_spec: `jax.eval_shape` accepts it silently (an
    accident), while a real run raises DuplicateSpecError. axischeck raises, as the run does."""
    return any(_repeats(spec) for spec in _flat_specs(case))


@pytest.mark.devices(8)
def test_duplicate_in_spec_axes_raise_in_a_real_run() -> None:
    """The deviation above, with JAX's real-run verdict."""
    f = jax.shard_map(lambda a: a, mesh=MESH, in_specs=P("x", "x"), out_specs=P("x"), check_vma=False)
    assert jax.eval_shape(f, jax.ShapeDtypeStruct((16, 16), jnp.float32)).shape == (16, 4)  # the accident
    with pytest.raises(Exception, match="DuplicateSpec|at most one positional dimension"):
        f(jnp.ones((16, 16)))
    with pytest.raises(ax.ArgumentError, match="twice"):
        ax.shard_map(lambda a: a, mesh=MESH, in_specs=P("x", "x"), out_specs=P("x"), check_vma=False).predict((16, 16))


@given(cases())
def test_shard_map_predict_agrees_with_jax(case: Case) -> None:
    want = jax_answer(case)
    if duplicate_in_spec_axes(case):
        with pytest.raises(ax.AxisCheckError):
            ax.shard_map(
                case.body.fn, mesh=case.mesh, in_specs=case.in_specs, out_specs=case.out_specs, check_vma=case.check_vma
            ).predict(*structs(case.shapes))
        event("documented deviation: duplicate in_spec axes")
        return
    pred = verdicts_agree(
        repr(case),
        want,
        lambda: ax.shard_map(
            case.body.fn,
            mesh=case.mesh,
            in_specs=case.in_specs,
            out_specs=case.out_specs,
            check_vma=case.check_vma,
        ).predict(*structs(case.shapes)),
    )
    if pred is None:
        return
    out, seen, returned = want
    assert pred.shapes == tuple(out.shape), case
    assert isinstance(pred.shapes, ax.Shape)
    dynamic = [b for b, s in zip(pred.in_block_shapes, _flat_specs(case), strict=True) if s is not None]
    assert [tuple(b) for b in dynamic] == [
        s for s, spec in zip(seen, _flat_specs(case), strict=True) if spec is not None
    ] or not seen
    assert (pred.block_shapes,) == tuple(returned), case


def _flat_specs(case: Case) -> list[Any]:
    return [case.in_specs] * len(case.shapes) if isinstance(case.in_specs, P) else list(case.in_specs)


@given(cases())
def test_shard_map_with_signature_agrees_with_jax(case: Case) -> None:
    """Declared per-device signatures predict by unification alone; JAX must agree."""
    if case.body.text not in ("a", "a.sum(0)") and not case.body.text.startswith("a * 2"):
        case = Case(case.mesh, case.shapes, case.in_specs, case.out_specs, Body("a", lambda *a: a[0]), case.check_vma)
    rank = len(case.shapes[0])
    names = " ".join(f"d{i}" for i in range(rank))
    out = names if case.body.text != "a.sum(0)" else " ".join(f"d{i}" for i in range(1, rank))
    if case.body.text == "a.sum(0)" and rank == 0:
        return  # not a valid per-device function at all: covered by the traced test
    sig = ",".join([f"({names.replace(' ', ',')})"] + ["(...)"] * (len(case.shapes) - 1))
    sig += f"->({out.replace(' ', ',')})"
    want = jax_answer(case)
    if duplicate_in_spec_axes(case):
        return  # documented deviation, asserted in the test above
    pred = verdicts_agree(
        f"{case} {sig}",
        want,
        lambda: ax.shard_map(
            case.body.fn,
            mesh=case.mesh,
            in_specs=case.in_specs,
            out_specs=case.out_specs,
            check_vma=case.check_vma,
            signature=sig,
        ).predict(*structs(case.shapes)),
    )
    if pred is not None:
        assert pred.shapes == tuple(want[0].shape), (case, sig)


@given(cases(), st.data())
def test_vmap_of_shard_map_agrees_with_jax(case: Case, data: st.DataObject) -> None:
    """A batch dim the shard_map never sees: vmap maps it away first, then puts it back."""
    if duplicate_in_spec_axes(case):
        return  # documented deviation, asserted above
    axes = tuple(data.draw(st.integers(0, len(s))) for s in case.shapes)
    batched = [s[:a] + (3,) + s[a:] for s, a in zip(case.shapes, axes, strict=True)]
    out_axis = data.draw(st.integers(0, 1))
    try:
        want: Any = jax.eval_shape(
            jax.vmap(
                jax.shard_map(
                    case.body.fn,
                    mesh=case.mesh,
                    in_specs=case.in_specs,
                    out_specs=case.out_specs,
                    check_vma=case.check_vma,
                ),
                in_axes=axes,
                out_axes=out_axis,
            ),
            *structs(tuple(batched)),
        )
    except Exception as err:
        want = err
    inner = ax.shard_map(
        case.body.fn, mesh=case.mesh, in_specs=case.in_specs, out_specs=case.out_specs, check_vma=case.check_vma
    )
    pred = verdicts_agree(
        f"{case} in_axes={axes}",
        want,
        lambda: ax.vmap(inner, in_axes=axes, out_axes=out_axis).predict(*structs(tuple(batched))),
    )
    if pred is not None:
        assert pred.shapes == tuple(want.shape), (case, axes)


@st.composite
def explicit_cases(draw: st.DrawFn) -> tuple[Any, list[jax.ShapeDtypeStruct], Any, Any, Body]:
    """An Explicit mesh (jax.make_mesh's default): arguments carry their own shardings."""
    sizes, names = draw(st.sampled_from(REAL_MESHES))
    mesh = jax.make_mesh(
        sizes,
        names,
        axis_types=(jax.sharding.AxisType.Explicit,) * len(names),
        devices=jax.devices()[: int(np.prod(sizes))],
    )
    args, arg_specs = [], []
    for k in range(draw(st.integers(1, 2))):
        shape, spec = draw(sharded_shape(mesh, 1 if k == 0 else 0))
        held = draw(st.sampled_from(["as in_spec", "as in_spec", "unsharded", "other"]))
        sharded = spec if held == "as in_spec" else draw(specs(names, len(shape))) if held == "other" else None
        arg = jax.ShapeDtypeStruct(shape, jnp.float32)
        if sharded is not None:
            try:  # only layouts JAX can hold
                sharding = jax.sharding.NamedSharding(mesh, sharded)
                sharding.shard_shape(shape)
                arg = jax.ShapeDtypeStruct(shape, jnp.float32, sharding=sharding)
            except Exception:
                pass
        args.append(arg)
        arg_specs.append(spec)
    in_specs = draw(st.sampled_from(["given", "omitted"]))
    body = draw(bodies(dict(mesh.shape), len(args[0].shape), len(args)))
    out_specs = arg_specs[0] if draw(st.booleans()) else draw(specs(names, len(args[0].shape)))
    return mesh, args, (tuple(arg_specs) if in_specs == "given" else None), out_specs, body


@pytest.mark.devices(8)
@given(explicit_cases())
def test_shard_map_on_explicit_meshes_agrees_with_jax(case: tuple[Any, list[Any], Any, Any, Body]) -> None:
    mesh, args, in_specs, out_specs, body = case
    options: dict[str, Any] = {"mesh": mesh, "out_specs": out_specs}
    if in_specs is not None:
        options["in_specs"] = in_specs
    if in_specs is not None and any(_repeats(s) for s in in_specs):
        return  # the documented eval_shape accident (see duplicate_in_spec_axes)
    try:
        want: Any = jax.eval_shape(jax.shard_map(body.fn, **options), *args)
    except Exception as err:
        want = err
    described = (
        f"{dict(mesh.shape)} args={[(a.shape, getattr(a.sharding, 'spec', None)) for a in args]} {options} {body.text}"
    )
    pred = verdicts_agree(described, want, lambda: ax.shard_map(body.fn, **options).predict(*args))
    if pred is not None:
        assert pred.shapes == tuple(want.shape), described


def _repeats(spec: Any) -> bool:
    axes = [a for e in (spec or ()) if e is not None for a in (e if isinstance(e, tuple) else (e,))]
    return len(axes) != len(set(axes))


# ------------------------------------------------------------------ explicit cases


MESH = cpu_mesh_or_none((4, 2), ("x", "y"), (AUTO, AUTO))  # None with fewer devices: its tests skip


@pytest.mark.devices(8)
def test_real_run_matches_prediction_and_jax_bit_for_bit() -> None:
    def step(a: jax.Array, b: jax.Array) -> jax.Array:
        return lax.psum(a * b.sum(), "y")

    f = ax.shard_map(step, mesh=MESH, in_specs=(P("x", "y"), P()), out_specs=P("x"))
    a = jnp.arange(16 * 6, dtype=jnp.float32).reshape(16, 6)
    b = jnp.ones(3)
    pred = f.predict(a, b)
    assert pred.shapes == (16, 3) and pred.block_shapes == (4, 3) and pred.mesh == {"x": 4, "y": 2}
    want = jax.shard_map(step, mesh=MESH, in_specs=(P("x", "y"), P()), out_specs=P("x"))(a, b)
    got = f(a, b)
    assert got.shape == pred.shapes
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert jax.jit(f)(a, b).shape == pred.shapes


@pytest.mark.devices(8)
def test_divisibility_error_names_argument_spec_and_mesh_axis() -> None:
    f = ax.shard_map(lambda a, b: a + b.sum(), mesh=MESH, in_specs=(P("x", None), P("x")), out_specs=P("x"))
    with pytest.raises(ax.ArgumentError) as info:
        f.predict((16, 6), (6,))
    msg = str(info.value)
    for fact in [
        "in_specs entry of b",
        "P('x',)",
        "axis 0 of b (size 6",
        "mesh axis 'x' (size 4)",
        "4 does not divide 6",
        "Mesh('x': 4, 'y': 2)",
    ]:
        assert fact in msg, (fact, msg)
    with pytest.raises(ax.ArgumentError):  # the checked call refuses before JAX runs
        f(jnp.ones((16, 6)), jnp.ones(6))


@pytest.mark.devices(8)
def test_rank_unknown_axis_and_duplicate_errors() -> None:
    rank = ax.shard_map(lambda a: a, mesh=MESH, in_specs=P("x", "y"), out_specs=P("x"))
    with pytest.raises(ax.ArgumentError, match=r"has length 2, but a has shape \(8,\), which has rank 1"):
        rank.predict((8,))
    unknown = ax.shard_map(lambda a: a, mesh=MESH, in_specs=P("z"), out_specs=P("x"))
    with pytest.raises(ax.SpecError, match=r"names mesh axis 'z', but the mesh is Mesh\('x': 4, 'y': 2\)"):
        unknown.predict((8,))
    dup = ax.shard_map(lambda a: a, mesh=MESH, in_specs=P("x", "x"), out_specs=P("x"))
    with pytest.raises(ax.ArgumentError, match="uses mesh axis 'x' twice"):
        dup.predict((8, 8))


@pytest.mark.devices(8)
def test_replication_promise_is_explained() -> None:
    f = ax.shard_map(lambda a: a.sum(0), mesh=MESH, in_specs=P("x"), out_specs=P())
    with pytest.raises(ax.OutputError, match="varies along it") as info:
        f.predict((16, 6))
    # Each device's sum already has the whole sum's shape: the hint names the psum, checked
    # to compute what the body computes on the whole array.
    hint = info.value.hint or ""
    assert "already has the shape the program gives the whole (6,)" in hint
    assert "jax.lax.psum(..., 'x')" in hint and "(checked:" in hint
    # Naming the axis runs (the engine accepts it) but stacks the 8 blocks' sums, where the
    # body on the whole array sums once: not what the program means, so no Fix.
    assert info.value.suggestions == ()
    (runs_but,) = [n for n in info.value.notes if n.startswith("Runs, but ")]
    assert "out_specs=P('x')" in runs_but and "where the program on one device gives (6,)" in runs_but
    spec = jax.ShapeDtypeStruct((16, 6), jnp.float32)
    stacked = jax.eval_shape(jax.shard_map(lambda a: a.sum(0), mesh=MESH, in_specs=P("x"), out_specs=P("x")), spec)
    assert stacked.shape != (6,)
    ok = ax.shard_map(lambda a: lax.psum(a.sum(0), "x"), mesh=MESH, in_specs=P("x"), out_specs=P())
    assert ok.predict((16, 6)).shapes == (6,)


def test_mesh_larger_than_the_machine() -> None:
    mesh = {"data": 64, "model": 8}
    # all_gather's result counts as varying over "model": promising replication needs check_vma=False
    f = ax.shard_map(
        lambda w: lax.all_gather(w, "model", axis=1, tiled=True),
        mesh=mesh,
        in_specs=P("data", "model"),
        out_specs=P("data"),
        check_vma=False,
    )
    pred = f.predict((1024, 512))
    assert pred.in_block_shapes == ((16, 64),)
    assert pred.block_shapes == (16, 512) and pred.shapes == (1024, 512)
    want = jax.eval_shape(
        jax.shard_map(
            lambda w: lax.all_gather(w, "model", axis=1, tiled=True),
            mesh=AbstractMesh((64, 8), ("data", "model"), axis_types=(AUTO, AUTO)),
            in_specs=P("data", "model"),
            out_specs=P("data"),
            check_vma=False,
        ),
        jax.ShapeDtypeStruct((1024, 512), jnp.float32),
    )
    assert pred.shapes == want.shape
    with pytest.raises(ax.CollectiveError, match="scattered dimension"):
        ax.shard_map(lambda w: lax.psum_scatter(w, "data"), mesh=mesh, in_specs=P("data"), out_specs=P("data")).predict(
            (1024, 3)
        )
    small = ax.shard_map(lambda w: w, mesh=MESH, in_specs=P("x"), out_specs=P("x"))
    assert small.predict_with_mesh({"x": 128, "y": 1}, (1024, 3)).block_shapes == (8, 3)


@pytest.mark.devices(8)
def test_context_mesh_and_decorator_form() -> None:
    @ax.shard_map(in_specs=P("x"), out_specs=P("x"))
    def double(a: jax.Array) -> jax.Array:
        return a * 2

    with pytest.raises(ax.SpecError, match="no mesh is set"):
        double.predict((16,))
    with jax.set_mesh(MESH):
        assert double.predict((16,)).block_shapes == (4,)
        assert double(jnp.ones(16)).shape == (16,)
    with jax.set_mesh(real_mesh((8,), ("x",))):
        assert double.predict((16,)).block_shapes == (2,)


@pytest.mark.devices(8)
def test_explicit_mesh_needs_matching_shardings() -> None:
    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    f = ax.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    with pytest.raises(ax.ArgumentError, match=r"is sharded as P\(\)"):
        f.predict((16, 6))
    sharded = jax.ShapeDtypeStruct((16, 6), jnp.float32, sharding=jax.sharding.NamedSharding(mesh, P("x")))
    assert f.predict(sharded).block_shapes == (4, 6)
    inferred = ax.shard_map(lambda a: a, mesh=mesh, out_specs=P("x", "y"))
    with pytest.warns(ax.AxisCheckWarning, match="2 identical copies"):  # nothing is split over 'y'
        assert inferred.predict(sharded).shapes == (16, 12)


@pytest.mark.devices(8)
def test_nested_with_vmap_both_ways() -> None:
    inner = ax.vmap(lambda a: lax.all_gather(a, "x", tiled=True))
    outer = ax.shard_map(inner, mesh=MESH, in_specs=P(None, "x"), out_specs=P(None, "x"))
    assert outer.predict((3, 16, 2)).shapes == (3, 64, 2)
    assert outer(jnp.ones((3, 16, 2))).shape == (3, 64, 2)
    per = ax.vmap(ax.shard_map(lambda a: lax.psum(a, "x"), mesh=MESH, in_specs=P("x"), out_specs=P()), in_axes=1)
    want = jax.eval_shape(
        jax.vmap(jax.shard_map(lambda a: lax.psum(a, "x"), mesh=MESH, in_specs=P("x"), out_specs=P()), in_axes=1),
        jax.ShapeDtypeStruct((16, 5, 6), jnp.float32),
    )
    assert per.predict((16, 5, 6)).shapes == want.shape


@pytest.mark.devices(8)
def test_bad_options_are_spec_errors() -> None:
    with pytest.raises(ax.SpecError, match=r"write P\('x'\)"):
        ax.shard_map(lambda a: a, mesh=MESH, in_specs="x", out_specs=P("x"))
    with pytest.raises(ax.SpecError, match="axis_names"):
        ax.shard_map(lambda a: a, mesh=MESH, in_specs=P("x"), out_specs=P("x"), axis_names={"q"})
    with pytest.raises(ax.SpecError, match="mesh"):
        ax.shard_map(lambda a: a, mesh=[4, 2], in_specs=P("x"), out_specs=P("x"))  # type: ignore[arg-type]
    f = ax.shard_map(lambda a: a, mesh=MESH, in_specs=P("x"), out_specs=P("x"))
    with pytest.raises(ax.ArgumentError, match="positionally"):
        f.predict(a=(16,))


@pytest.mark.devices(8)
def test_shard_shape_matches_named_sharding() -> None:
    for spec in [P("x", "y"), P(("x", "y")), P(None, "x"), P()]:
        sharding = jax.sharding.NamedSharding(MESH, spec)
        assert ax.shard_shape((16, 8), sharding) == sharding.shard_shape((16, 8))
    tree = {"w": (16, 8), "b": (8,)}
    got = ax.shard_shape(tree, {"w": (MESH, P("x", "y")), "b": (MESH, P("y"))})
    assert got == {"w": (4, 4), "b": (4,)}
    with pytest.raises(ax.ArgumentError, match="4 does not divide 6"):
        ax.shard_shape((6, 6), jax.sharding.NamedSharding(MESH, P("x")))
    with pytest.raises(Exception, match="partitioned 4 times"):  # JAX agrees that it raises
        jax.sharding.NamedSharding(MESH, P("x")).shard_shape((6, 6))


@pytest.mark.devices(8)
def test_checked_calls_report_lies_and_function_errors_per_device() -> None:
    liar = ax.shard_map(lambda a: a.sum(0), mesh=MESH, in_specs=P("x"), out_specs=P("x"), signature="(n,k)->(n,k)")
    with pytest.raises(ax.OutputError, match=r"contradicts its signature: output has shape \(24,\)"):
        liar(jnp.ones((16, 6)))
    bad = ax.shard_map(lambda a: a @ a, mesh=MESH, in_specs=P("x"), out_specs=P("x"))
    with pytest.raises(TypeError, match="dot_general"):  # the function's own error passes through untouched
        bad(jnp.ones((16, 6)))
    with pytest.raises(ax.FunctionError, match=r"per-device arguments \(a: \(4, 6\)\)"):
        bad.predict((16, 6))
    planned = ax.shard_map(lambda a: a, mesh={"x": 4}, in_specs=P("x"), out_specs=P("x"))
    assert planned.predict((16,)).block_shapes == (4,)
    with pytest.raises(ax.SpecError, match="can predict but not run"):
        planned(jnp.ones(16))


@pytest.mark.parametrize(
    ("in_specs", "out_specs", "axis_names", "body"),
    [
        (P("x"), P("x"), {"x"}, lambda a: a),
        (P("x", "y"), P("x"), {"x"}, lambda a: a),  # 'y' is not manual here
        (P("x"), P(), {"x"}, lambda a: a.sum(0)),  # replication promise over 'x' broken
        (P("x"), P(), {"x"}, lambda a: lax.psum(a, "x")),
        (None, P("x"), set(), lambda a: a),  # static: every device sees the whole array
        ((P("x"),), P("x"), set(), lambda a: a),
        ([P("x")], P("x"), set(), lambda a: a),  # a list is not the tuple of arguments
        (P("x"), (P("x"),), set(), lambda a: a),  # out_specs tuple vs a single array
        (P("x"), {"u": P("x")}, set(), lambda a: {"u": a, "v": a}),
        (P("x"), {"u": P("x"), "v": P(None, "y")}, set(), lambda a: {"u": a, "v": a}),
    ],
)
def test_specific_spec_forms_agree_with_jax(in_specs: Any, out_specs: Any, axis_names: set[str], body: Any) -> None:
    x = jax.ShapeDtypeStruct((16, 6), jnp.float32)
    try:
        want: Any = jax.eval_shape(
            jax.shard_map(body, mesh=MESH, in_specs=in_specs, out_specs=out_specs, axis_names=axis_names), x
        )
    except Exception as err:
        want = err
    # in_specs None passes the array whole to every device: out_specs P('x') stacks copies.
    copies = pytest.warns(ax.AxisCheckWarning, match="identical copies") if in_specs is None else nullcontext()
    with copies:
        pred = verdicts_agree(
            f"in_specs={in_specs} out_specs={out_specs}",
            want,
            lambda: ax.shard_map(
                body, mesh=MESH, in_specs=in_specs, out_specs=out_specs, axis_names=axis_names
            ).predict(x),
        )
    if pred is not None:
        assert pred.shapes == jax.tree_util.tree_map(lambda s: tuple(s.shape), want)


SDS = jax.ShapeDtypeStruct
F32 = jnp.float32


@pytest.mark.parametrize(
    ("body", "in_specs", "out_specs", "args"),
    [
        (lambda a, s: a * s, (P("x"), P()), P("x"), (SDS((16,), F32), 2.0)),  # Python scalars
        (lambda a: a, P("x"), P("x"), (np.ones((16, 2)),)),  # numpy arrays
        (lambda a: None, P("x"), P("x"), (SDS((16,), F32),)),  # no outputs
        (lambda a: 1.0, P("x"), P(), (SDS((16,), F32),)),  # a Python scalar output
        (lambda a: (a, a.sum()), P("x"), P("x"), (SDS((16,), F32),)),  # out_spec too long for the sum
        (lambda a: {"k": a}, P("x"), P("x"), (SDS((16,), F32),)),
        (lambda: jnp.zeros(3), (), P(), ()),  # no arguments
        (lambda d: d["w"], ({"w": P("x")},), P("x"), ({"w": SDS((16,), F32)},)),
        (lambda d: d["w"], (P("x"),), P("x"), ({"w": SDS((16,), F32), "b": SDS((8,), F32)},)),
        (lambda a: a, P("x"), P("x"), (SDS((16,), jnp.bool_),)),
        (lambda a: a, P(("x", "y")), P(("y", "x")), (SDS((16,), F32),)),
        (lambda a: a + lax.axis_index(("x", "y")), P("x"), P("x"), (SDS((16,), F32),)),  # varies over y
        (lambda a: a * lax.axis_size("x"), P("x"), P("x"), (SDS((16,), F32),)),
        (lambda a: lax.pmax(a, "x"), P("x"), P(), (SDS((16,), F32),)),
        (lambda a: lax.psum(a, ("x", "y")), P(("x", "y")), P(), (SDS((16,), F32),)),
        (lambda a: lax.all_to_all(a, "x", 0, 0), P("x"), P("x"), (SDS((24, 3), F32),)),
        (lambda a: lax.all_gather(a, "x", tiled=True, to="invarying"), P("x"), P(), (SDS((16, 3), F32),)),
        (lambda a: lax.pcast(a, "x", to="varying"), P(), P("x"), (SDS((16, 3), F32),)),
        (lambda a: a, P("x"), P("x"), (SDS((0, 3), F32),)),  # empty arrays split evenly
        (lambda a, s: a, (P("x"), None), P("x"), (SDS((16,), F32), "text")),
        (lambda a, s: a, (P("x"), P()), P("x"), (SDS((16,), F32), "text")),
    ],
)
def test_odd_arguments_and_outputs_agree_with_jax(
    body: Any, in_specs: Any, out_specs: Any, args: tuple[Any, ...]
) -> None:
    try:
        want: Any = jax.eval_shape(jax.shard_map(body, mesh=MESH, in_specs=in_specs, out_specs=out_specs), *args)
    except Exception as err:
        want = err
    pred = verdicts_agree(
        f"in_specs={in_specs} out_specs={out_specs} args={args}",
        want,
        lambda: ax.shard_map(body, mesh=MESH, in_specs=in_specs, out_specs=out_specs).predict(*args),
    )
    if pred is not None:
        assert pred.shapes == jax.tree_util.tree_map(lambda s: tuple(s.shape), want)


def test_jax_batching_crash_under_vmap_is_predicted() -> None:
    """JAX 0.10 crashes (IndexError in its batching rule) for a non-tiled psum_scatter in a
    shard_map under vmap when the batch is not axis 0; axischeck asks JAX, so predicts it."""
    inner = ax.shard_map(
        lambda a: lax.psum_scatter(a, "x"), mesh=real_mesh((2,), ("x",)), in_specs=P(), out_specs=P(), check_vma=False
    )
    with pytest.raises(ax.FunctionError, match="IndexError"):
        ax.vmap(inner, in_axes=1).predict((2, 3))
    assert ax.vmap(inner, in_axes=0).predict((3, 2)).shapes == (3,)


# ------------------------------------------------- adversarial review findings (fixed)

EXPLICIT = cpu_mesh_or_none((4, 2), ("x", "y"), (jax.sharding.AxisType.Explicit,) * 2)


@pytest.mark.devices(8)
def test_explicit_mesh_arguments_read_their_type_under_jit_too() -> None:
    xs = jax.device_put(jnp.ones((16, 6)), jax.sharding.NamedSharding(EXPLICIT, P("x")))
    f = ax.shard_map(lambda a: a, mesh=EXPLICIT, in_specs=P("x"), out_specs=P("x"))
    assert jax.jit(f)(xs).shape == (16, 6)  # the argument is a tracer here: its type says P('x')
    inferred = ax.shard_map(lambda a: a, mesh=EXPLICIT, out_specs=P("x"), signature="(n,k)->(n,k)")
    assert jax.jit(inferred)(xs).shape == (16, 6)
    assert inferred.predict(xs).in_block_shapes == ((4, 6),)
    # An array sharded on an Auto mesh has no Explicit axes in its type: unsharded here.
    auto = jax.device_put(jnp.ones((16, 6)), jax.sharding.NamedSharding(MESH, P("x")))
    replicated = ax.shard_map(lambda a: a, mesh=EXPLICIT, in_specs=P(), out_specs=P(), check_vma=False)
    assert replicated(auto).shape == (16, 6)


@pytest.mark.devices(8)
def test_predictions_are_not_cached_across_shardings_or_context_meshes() -> None:
    xs = jax.device_put(jnp.ones((16, 6)), jax.sharding.NamedSharding(EXPLICIT, P("x")))
    xy = jax.device_put(jnp.ones((16, 6)), jax.sharding.NamedSharding(EXPLICIT, P("x", "y")))
    f = ax.shard_map(lambda a: a, mesh=EXPLICIT, out_specs=P(), check_vma=False, signature="(n,k)->(n,k)")
    assert f.predict(xs).shapes == (4, 6)
    assert f.predict(xy).shapes == (4, 3)  # same shape, another sharding: another answer
    g = ax.vmap(ax.shard_map(lambda a: a, in_specs=P("x"), out_specs=P(), check_vma=False, signature="(n,k)->(n,k)"))
    with jax.set_mesh(real_mesh((8,), ("x",))):
        assert g.predict((3, 16, 6)).shapes == (3, 2, 6)
    with jax.set_mesh(real_mesh((2,), ("x",))):
        assert g.predict((3, 16, 6)).shapes == (3, 8, 6)
    with pytest.raises(ax.SpecError, match="no mesh is set"):
        g.predict((3, 16, 6))


def test_jax_refusals_before_the_function_runs_are_not_blamed_on_it() -> None:
    with jax.set_mesh(real_mesh((8,), ("x",))):
        f = ax.shard_map(lambda a: a, mesh=MESH, in_specs=P("x"), out_specs=P("x"), signature="(n)->(n)")
        with pytest.raises(ax.SpecError, match="context mesh"):
            f.predict((16,))
    inner = ax.shard_map(lambda a: a, mesh=real_mesh((4,), ("x",)), in_specs=P("x"), out_specs=P("x"))
    with pytest.raises(ax.ArgumentError, match="inside pmap"):
        ax.pmap(inner).predict((2, 16, 6))


@pytest.mark.devices(8)
def test_options_as_jax_takes_them() -> None:
    both = ax.shard_map(lambda a: (a, None), mesh=MESH, in_specs=P("x"), out_specs=(P("x"), None))
    assert both.predict((16, 6)).shapes == ((16, 6), None)
    assert ax.shard_map(lambda a: a, mesh=MESH, in_specs=P("x"), out_specs=P("x"), check_vma=1).predict(
        (16,)
    ).shapes == (16,)
    with pytest.raises(ax.SpecError, match="set or frozenset"):
        ax.shard_map(lambda a: a, mesh=MESH, in_specs=P("x"), out_specs=P("x"), axis_names=dict(x=1).keys())
    text = jnp.ones(16), "text"
    static = ax.shard_map(lambda a, s: a, mesh=MESH, in_specs=(P("x"), None), out_specs=P("x"))
    assert static(*text).shape == (16,)  # a real call closes over it, as JAX does
    with pytest.raises(ax.ArgumentError, match="not an array"):
        static.predict(*text)  # jax.eval_shape cannot take it


@pytest.mark.devices(8)
@pytest.mark.parametrize("check_vma", [True, False, 1, 0, None])
def test_shard_map_hands_jax_check_vma_as_given(check_vma: Any) -> None:
    """JAX records check_vma as it was given (its jaxpr shows `check_vma=1`): the drop-in
    hands it over unchanged, so the lowered program is JAX's own."""
    mesh = jax.make_mesh((8,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
    x = jnp.ones((8, 4))
    options: dict[str, Any] = {"mesh": mesh, "in_specs": P("i"), "out_specs": P("i"), "check_vma": check_vma}
    ours = jax.make_jaxpr(ax.shard_map(lambda a: a * 2, **options))(x)
    theirs = jax.make_jaxpr(jax.shard_map(lambda a: a * 2, **options))(x)
    assert str(ours) == str(theirs)
    with pytest.raises(ax.SpecError, match="check_vma"):
        ax.shard_map(lambda a: a, mesh=mesh, in_specs=P("i"), out_specs=P("i"), check_vma=np.array([1, 1]))


@pytest.mark.parametrize("spec", [P("x", unreduced={"y"}), P(None, reduced={"y"})])
def test_specs_with_unreduced_axes_agree_with_jax(spec: Any) -> None:
    x = jax.ShapeDtypeStruct((16, 6), jnp.float32)
    try:
        want: Any = jax.eval_shape(jax.shard_map(lambda a: a, mesh=EXPLICIT, in_specs=spec, out_specs=P("x")), x)
    except Exception as err:
        want = err
    pred = verdicts_agree(
        str(spec), want, lambda: ax.shard_map(lambda a: a, mesh=EXPLICIT, in_specs=spec, out_specs=P("x")).predict(x)
    )
    if pred is not None:
        assert pred.shapes == tuple(want.shape)


@pytest.mark.devices(8)
def test_shard_shape_reads_layouts_as_jax_does() -> None:
    for spec, shape in [(P("x", None, None), (16, 6)), (P(None), ()), (P(P.UNCONSTRAINED, "x"), (16, 8))]:
        assert ax.shard_shape(shape, jax.sharding.NamedSharding(MESH, spec)) == jax.sharding.NamedSharding(
            MESH, spec
        ).shard_shape(shape)
    assert ax.shard_shape((np.int64(16), 6), jax.sharding.NamedSharding(MESH, P("x"))) == (4, 6)
    with pytest.raises(ax.SpecError, match="must be a PartitionSpec"):
        ax.shard_shape((16, 8), ({"x": 4}, "x"))


@pytest.mark.devices(8)
@pytest.mark.parametrize("in_specs", [P("x", "y"), "inferred"])
@pytest.mark.parametrize("signature", [None, "(n,k)->(n,k)"])
def test_vmap_keeps_explicit_shardings_of_the_other_dims(in_specs: Any, signature: str | None) -> None:
    xc = jax.device_put(jnp.ones((4, 16, 6)), jax.sharding.NamedSharding(EXPLICIT, P(None, "x", "y")))
    options: dict[str, Any] = {"mesh": EXPLICIT, "out_specs": P("x", "y")}
    if in_specs != "inferred":
        options["in_specs"] = in_specs
    want = jax.eval_shape(jax.vmap(jax.shard_map(lambda a: a * 2, **options)), xc)
    f = ax.vmap(ax.shard_map(lambda a: a * 2, signature=signature, **options))
    assert f.predict(xc).shapes == want.shape == f(xc).shape


@pytest.mark.parametrize(
    ("spmd", "in_specs", "out_specs"),
    [
        ("x", P("x", "y"), P("x", "y")),
        ("x", P(None, "y"), P("x", "y")),
        ("x", P(None, "y"), P(None, "y")),
        (("x", "y"), P(None, "y"), P(None, "y")),
        ("y", P("x"), P("x")),
    ],
)
def test_vmap_spmd_axis_name_around_shard_map(spmd: Any, in_specs: Any, out_specs: Any) -> None:
    x = jax.ShapeDtypeStruct((4, 16, 6), jnp.float32)
    try:
        want: Any = jax.eval_shape(
            jax.vmap(
                jax.shard_map(lambda a: a * 2, mesh=MESH, in_specs=in_specs, out_specs=out_specs), spmd_axis_name=spmd
            ),
            x,
        )
    except Exception as err:
        want = err
    pred = verdicts_agree(
        f"spmd_axis_name={spmd} {in_specs} {out_specs}",
        want,
        lambda: ax.vmap(
            ax.shard_map(lambda a: a * 2, mesh=MESH, in_specs=in_specs, out_specs=out_specs),
            spmd_axis_name=spmd,
        ).predict(x),
    )
    if pred is not None:
        assert pred.shapes == tuple(want.shape)


@pytest.mark.devices(8)
def test_nested_shard_map_takes_the_enclosing_mesh() -> None:
    """JAX's nesting pattern: the inner shard_map has mesh=None and sees the outer's mesh."""

    def inner_fn(a: jax.Array) -> jax.Array:
        return lax.psum(a, "y")

    x = jnp.ones((16, 6))
    plain = jax.shard_map(
        jax.shard_map(inner_fn, in_specs=P(None, "y"), out_specs=P(), axis_names={"y"}),
        mesh=MESH,
        in_specs=P("x"),
        out_specs=P("x"),
        axis_names={"x"},
    )
    inner = ax.shard_map(inner_fn, in_specs=P(None, "y"), out_specs=P(), axis_names={"y"})
    outer = ax.shard_map(inner, mesh=MESH, in_specs=P("x"), out_specs=P("x"), axis_names={"x"})
    pred = outer.predict(x)
    assert pred.shapes == jax.eval_shape(plain, x).shape == outer(x).shape == (16, 3)
    assert pred.block_shapes == (4, 3)


@pytest.mark.devices(8)
def test_a_struct_whose_sharding_cannot_hold_its_shape_is_refused_as_jax_refuses_it() -> None:
    bad = jax.ShapeDtypeStruct((8, 3, 4), jnp.float32, sharding=jax.sharding.NamedSharding(EXPLICIT, P(None, "x")))
    with pytest.raises(ValueError, match="does not evenly divide"):
        jax.eval_shape(jax.shard_map(lambda a: a, mesh=EXPLICIT, out_specs=P(None, "x")), bad)
    with pytest.raises(ax.ArgumentError, match="cannot lay out its shape"):
        ax.shard_map(lambda a: a, mesh=EXPLICIT, out_specs=P(None, "x"), signature="(a,b,c)->(a,b,c)").predict(bad)
    with pytest.raises(ax.ArgumentError, match="cannot lay out its shape"):
        ax.vmap(lambda a: a).predict(bad)


def test_signature_conflicts_are_explained_per_device() -> None:
    f = ax.shard_map(
        lambda a, b: a @ b, mesh={"x": 4}, in_specs=(P("x"), P()), out_specs=P("x"), signature="(n,k),(k,m)->(n,m)"
    )
    with pytest.raises(ax.ArgumentError) as info:
        f.predict((16, 3), (4, 2))
    msg = str(info.value)
    assert "dimension 'k' disagrees: 3 from a, 4 from b" in msg
    assert "a    (16, 3)       P('x',)  (4, 3)" in msg  # global shape, spec, block
    assert (
        "'k' is axis 1 of a's per-device block (4, 3) (size 3) but axis 0 of b's per-device block (4, 2) (size 4)"
        in msg
    )


@pytest.mark.devices(8)
@pytest.mark.parametrize(
    "make",
    [
        lambda f: ax.vmap(f),
        lambda f: ax.pmap(f),
        lambda f: ax.shard_map(f, mesh=real_mesh((8,), ("x",)), in_specs=P("x"), out_specs=P("x")),
    ],
)
def test_non_jax_outputs_are_the_functions_own_error(make: Any) -> None:
    f = make(lambda a: "text")
    with pytest.raises(TypeError, match="not a valid JAX type"):  # JAX's error, untouched
        f(jnp.ones((8, 3)))
    with pytest.raises(ax.FunctionError, match="returned a str at output, which is not a JAX type"):
        f.predict((8, 3))


@pytest.mark.devices(8)
def test_an_axis_the_mesh_does_not_divide_gets_a_checked_padding() -> None:
    f = ax.shard_map(lambda a: a * 2, mesh=MESH, in_specs=P("x"), out_specs=P("x"))
    with pytest.raises(ax.ArgumentError, match="4 does not divide 6") as info:
        f.predict((6, 3))
    (reshaped,) = info.value.suggestions  # the same 8 devices as 2 x 4 split 6 in 2, computing a * 2 alike
    assert dict(reshaped.as_kwargs()["mesh"].shape) == {"x": 2, "y": 4}
    assert info.value.fix is not None and info.value.fix.startswith("the mesh reshaped to (2, 4)")
    # Padding changes the program's data, so it is never checked as a fix: it runs, and says so.
    (padding,) = [n for n in info.value.notes if n.startswith("Runs, but ")]
    assert padding.endswith("pad axis 0 of a from 6 to 8 (a multiple of 4, e.g. jnp.pad)")
    assert f.predict((8, 3)).shapes == (8, 3)
    # Another mesh axis that divides the axis runs, and so does another mesh shape; but each
    # device then sums its own rows, and out_specs=P() (check_vma=False) returns device 0's
    # partial sum, where the body on the whole array sums every row: no Fix, and each is
    # shown as what it changes.
    total = lambda a: a.sum(0)  # noqa: E731
    g = ax.shard_map(total, mesh=MESH, in_specs=P("x"), out_specs=P(), check_vma=False)
    with pytest.raises(ax.ArgumentError) as other:
        g.predict((6, 3))
    assert other.value.suggestions == ()
    runs_but = [n for n in other.value.notes if n.startswith("Runs, but ")]
    assert any("in_specs=P('y')" in n and "computes other values than the program on one device" in n for n in runs_but)
    assert ax.shard_map(total, mesh=MESH, in_specs=P("y"), out_specs=P(), check_vma=False).predict((6, 3)).shapes == (
        3,
    )

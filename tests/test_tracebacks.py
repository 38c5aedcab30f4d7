"""Tracebacks the JAX way: axischeck's files are registered with JAX's traceback
filtering, so a user sees their own frames and the message by default, and every frame
with `JAX_TRACEBACK_FILTERING=off` (nothing is thrown away). Whatever the transform, an
error from a decorated call points at the caller's line, through few of axischeck's frames
and no one else's, without a "During handling of the above exception" chain."""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import axischeck as ax
from jax_oracle import axischeck_frames

EINSUM = "(a,b),(b,c),(a,c)->(a,c)"


def op(x: jax.Array, y: jax.Array, z: jax.Array) -> jax.Array:
    return jnp.einsum("ab,bc->ac", x, y) + z


@pytest.fixture
def filtering_off() -> Iterator[None]:
    before = jax.config.jax_traceback_filtering
    jax.config.update("jax_traceback_filtering", "off")
    try:
        yield
    finally:
        jax.config.update("jax_traceback_filtering", before)


FAILURES: dict[str, Callable[[], Any]] = {
    "call": lambda: ax.vmap(op, in_axes=(0, 1, 0), signature=EINSUM)(
        jnp.ones((16, 8, 4)), jnp.ones((5, 16, 2)), jnp.ones((16, 8, 2))
    ),
    "predict": lambda: ax.vmap(op, in_axes=(0, 1, 0)).predict((16, 8, 4), (5, 16, 2), (16, 8, 2)),
    "construction": lambda: ax.vmap(op, in_axes="0"),  # axischeck: ignore[AX002] - the mistake under test
}


def _ours(err: BaseException) -> list[traceback.FrameSummary]:
    return axischeck_frames(traceback.extract_tb(err.__traceback__))


@pytest.mark.parametrize("failure", list(FAILURES), ids=list(FAILURES))
def test_axischecks_frames_are_hidden_by_default(failure: str) -> None:
    with pytest.raises(ax.AxisCheckError) as info:
        FAILURES[failure]()
    assert _ours(info.value) == []
    assert Path(traceback.extract_tb(info.value.__traceback__)[0].filename).resolve() == Path(__file__).resolve()


@pytest.mark.parametrize("failure", list(FAILURES), ids=list(FAILURES))
def test_every_frame_is_there_with_filtering_off(failure: str, filtering_off: None) -> None:
    with pytest.raises(ax.AxisCheckError) as info:
        FAILURES[failure]()
    assert _ours(info.value), "axischeck's frames were thrown away"


# ------------------------------------------------------- the caller's line, every transform

_X, _Y_BAD, _Z = jnp.ones((16, 8, 4)), jnp.ones((5, 16, 2)), jnp.ones((16, 8, 2))


Case = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class _Hyg:
    @ax.vmap(in_axes=(None, 0), signature={"x": "(n, m)", "return": "(n)"})
    def apply(self, x: jax.Array) -> jax.Array:
        return x.sum(-1)


HYGIENE_CASES: dict[str, Callable[[], Case]] = {
    "signature": lambda: (ax.vmap(op, in_axes=(0, 1, 0), signature=EINSUM), (_X, _Y_BAD, _Z), {}),
    "no-signature-rank": lambda: (ax.vmap(op, in_axes=(0, 3, 0)), (_X, _Y_BAD, _Z), {}),
    "no-signature-batch": lambda: (ax.vmap(op, in_axes=(0, 0, 0)), (_X, _Y_BAD, _Z), {}),
    "check": lambda: (
        ax.check(lambda X, W: X @ W, signature="n f, f o -> n"),
        (jnp.ones((4, 3)), jnp.ones((2, 1))),
        {},
    ),
    "jit": lambda: (jax.jit(ax.vmap(op, in_axes=(0, 1, 0), signature=EINSUM)), (_X, _Y_BAD, _Z), {}),
    "nested": lambda: (ax.vmap(ax.vmap(lambda x: x.sum(), signature="(n)->()"), in_axes=1), (jnp.ones((2, 3)),), {}),
    "out_axes-none": lambda: (ax.vmap(_ident, out_axes=None), (jnp.ones((2, 3)),), {}),
    "kwargs": lambda: (
        ax.vmap(lambda x, y: x + y, signature="(n),(n)->(n)"),
        (jnp.ones((2, 3)),),
        {"y": jnp.ones((3, 4))},
    ),
    "predict": lambda: (ax.vmap(op, in_axes=(0, 1, 0), signature=EINSUM).predict, (_X, _Y_BAD, _Z), {}),
    "bound-method": lambda: (_Hyg().apply, (jnp.ones((2, 3)),), {}),
}


def _ident(x: jax.Array) -> jax.Array:
    return x


@pytest.mark.parametrize("case", list(HYGIENE_CASES.values()), ids=list(HYGIENE_CASES))
def test_errors_from_decorated_calls_point_at_the_callers_line(case: Callable[[], Case]) -> None:
    target, args, kwargs = case()
    line = inspect.currentframe().f_lineno + 2  # type: ignore[union-attr]
    try:
        target(*args, **kwargs)
    except ax.AxisCheckError as err:
        error = err
    else:
        pytest.fail("no AxisCheckError")
    frames = traceback.extract_tb(error.__traceback__)
    assert Path(frames[0].filename).resolve() == Path(__file__).resolve() and frames[0].lineno == line, frames[0]
    assert frames[0].name == "test_errors_from_decorated_calls_point_at_the_callers_line"
    ours = axischeck_frames(frames)
    assert len(ours) <= 3, "\n" + "".join(traceback.format_list(frames))
    others = [f for f in frames[1:] if f not in ours]
    assert not others, "frames outside the caller and axischeck:\n" + "".join(traceback.format_list(others))
    # No noisy "During handling of the above exception, another exception occurred".
    rendered = "".join(traceback.format_exception(error))
    assert "During handling of the above exception" not in rendered, rendered


# ------------------------------------------- the user's function, as deep as under JAX's


def _depth_inside(transform: Callable[..., Any], *args: Any) -> int:
    """How many frames lie between this function and the mapped function's body."""
    depths: list[int] = []
    outer = len(inspect.stack())

    def body(x: jax.Array) -> jax.Array:
        depths.append(len(inspect.stack()) - outer)
        return x

    transform(body)(*args)
    return depths[0]


def test_the_mapped_function_runs_as_deep_as_under_jaxs_vmap() -> None:
    """JAX's own test_vmap_traceback counts these frames: the checked call is its own
    traceback boundary and calls inside JAX's, so it adds no frame."""
    x = jnp.arange(3.0)
    assert _depth_inside(ax.vmap, x) == _depth_inside(jax.vmap, x)


def _raises_inside(x: jax.Array) -> jax.Array:
    raise ValueError("from the user's function")


def _frames_of_users_error(transform: Callable[..., Any], x: jax.Array | None = None) -> list[tuple[str, str]]:
    with pytest.raises(ValueError, match="from the user's function") as info:
        transform(_raises_inside)(jnp.arange(3.0) if x is None else x)
    return [(Path(f.filename).name, f.name) for f in traceback.extract_tb(info.value.__traceback__)]


def test_an_error_in_the_users_function_has_jaxs_traceback() -> None:
    frames = _frames_of_users_error(ax.vmap)
    assert frames == _frames_of_users_error(jax.vmap)
    assert frames[-1] == ("test_tracebacks.py", "_raises_inside")


def test_an_error_in_the_users_function_keeps_every_frame_with_filtering_off(filtering_off: None) -> None:
    frames = _frames_of_users_error(ax.vmap)
    assert ("_transform.py", "__call__") in frames and ("api.py", "vmap_f") in frames


def test_under_jit_the_outer_boundary_filters_once() -> None:
    frames = _frames_of_users_error(lambda f: jax.jit(ax.vmap(f)))
    assert [f for f in frames if f[0] not in {"test_tracebacks.py"}] == []


def test_a_nest_of_checked_transforms_filters_once() -> None:
    """The outermost checked call filters, as the outermost of JAX's boundaries does:
    JAX's note about the removed frames is added once, and the frames are a JAX nest's."""
    frames = _frames_of_users_error(lambda f: ax.vmap(ax.vmap(f)), jnp.ones((2, 3)))
    assert frames == _frames_of_users_error(lambda f: jax.vmap(jax.vmap(f)), jnp.ones((2, 3)))
    with pytest.raises(ValueError) as info:
        ax.vmap(ax.vmap(_raises_inside))(jnp.ones((2, 3)))
    notes = getattr(info.value, "__notes__", [])
    assert sum("JAX has removed its internal frames" in note for note in notes) == 1, notes


def test_a_boundary_inside_jaxs_transform_filters_once() -> None:
    """pmap's function calls jit, whose boundary filters first: the checked call removes
    only the frames added since, and JAX's note is not added again."""
    with pytest.raises(ValueError, match="from the user's function") as info:
        ax.pmap(_raises_inside)(jnp.ones((1, 3)))
    frames = [(Path(f.filename).name, f.name) for f in traceback.extract_tb(info.value.__traceback__)]
    assert frames[0][0] == "test_tracebacks.py" and frames[-1] == ("test_tracebacks.py", "_raises_inside")
    assert _ours(info.value) == []
    notes = getattr(info.value, "__notes__", [])
    assert sum("JAX has removed its internal frames" in note for note in notes) == 1, notes
    assert "JAX has removed its internal frames" in notes[-1], "JAX's note comes last, after axischeck's"
    assert any(note.startswith("axischeck: pmap(") for note in notes), notes


def test_with_filtering_off_an_exception_filtered_before_keeps_every_frame() -> None:
    """An exception JAX filtered once (caught, kept, raised again in a mapped function)
    keeps every frame when filtering is off: its old note does not make the call filter."""
    with pytest.raises(ValueError) as first:
        jax.jit(_raises_inside)(jnp.ones(3))
    kept = first.value

    def raises_again(x: jax.Array) -> jax.Array:
        raise kept

    before = jax.config.jax_traceback_filtering
    jax.config.update("jax_traceback_filtering", "off")
    try:
        with pytest.raises(ValueError) as info:
            ax.vmap(raises_again)(jnp.arange(3.0))
    finally:
        jax.config.update("jax_traceback_filtering", before)
    assert "vmap_f" in [f.name for f in traceback.extract_tb(info.value.__traceback__)]


def test_jax_source_information_names_the_users_line() -> None:
    """JAX's source information passes over axischeck's frames as over its own: the line
    where a tracer "was created" and a lowered program's locations are the user's."""
    import re

    import numpy as np

    def created_on(transform: Any) -> str:
        with pytest.raises(jax.errors.TracerArrayConversionError) as caught:
            transform(lambda x: np.asarray(x))(jnp.ones(3))
        found = re.search(r"was created on line:\n\s*(\S+)", str(caught.value))
        assert found is not None
        return found.group(1).rsplit(":", 2)[0]

    assert created_on(ax.vmap) == created_on(jax.vmap) == __file__

    def locations(transform: Any) -> set[str]:
        mapped = transform(lambda x: x - jax.lax.pmean(jnp.sin(x), "i"), axis_name="i")
        text = jax.jit(mapped).lower(jnp.ones((8, 2))).as_text(debug_info=True)
        return set(re.findall(r'loc\("([^"]+)"', text))

    assert locations(ax.vmap) == locations(jax.vmap)


def test_a_file_beside_the_package_stays_the_users_in_jax_source_information() -> None:
    """JAX's source information skips files by a prefix of their name: axischeck's is its
    folder with the separator, so a sibling such as `axischeck_models/` stays the user's."""
    from jax._src import source_info_util

    package = Path(ax.__file__).resolve().parent
    assert not source_info_util.is_user_filename(str(package / "_transform.py"))
    assert source_info_util.is_user_filename(f"{package}_models/model.py")

"""The linter's interpreter (`_values`, `_shapes`): what it knows, what it refuses to know,
and its findings against real JAX."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from axischeck._lint import lint_files
from axischeck._lint._literals import UNKNOWN
from axischeck._lint._project import Project
from axischeck._lint._shapes import DEVICES, Array

# ------------------------------------------------------------------ the interpreter


def _value_of(tmp_path: Path, source: str, name: str = "RESULT") -> Any:
    """The interpreter's value of the last read of `name` in `source`."""
    path = tmp_path / "case.py"
    path.write_text(textwrap.dedent(source))
    project = Project([path])
    module = project.module(path)
    assert module is not None
    reads = module.loads[name]
    return project.values.of(reads[-1], module)


PRELUDE = """\
import jax
import jax.numpy as jnp
import numpy as np
from functools import partial
rng = np.random.default_rng(0)
KEY = jax.random.PRNGKey(0)
"""


@pytest.mark.parametrize(
    ("expr", "shape"),
    [
        ("jnp.ones((10, 4))", (10, 4)),
        ("np.zeros(3)", (3,)),
        ("jnp.full(1, 0.5)", (1,)),
        ("jnp.empty([2, 3, 4])", (2, 3, 4)),
        ("jnp.arange(32.0).reshape(8, 4)", (8, 4)),
        ("jnp.arange(2, 11, 3)", (3,)),
        ("jnp.arange(12).reshape((3, -1))", (3, 4)),
        ("jnp.linspace(0.0, 1.0, 7)", (7,)),
        ("jnp.linspace(0.0, 1.0)", (50,)),
        ("jnp.eye(3)", (3, 3)),
        ("jnp.eye(3, 5).T", (5, 3)),
        ("jnp.ones((2, 3, 4)).transpose(1, 0, 2)", (3, 2, 4)),
        ("jnp.transpose(jnp.ones((2, 3)))", (3, 2)),
        ("jnp.zeros_like(jnp.ones((2, 5)))", (2, 5)),
        ("jnp.stack([jnp.ones(3), jnp.ones(3)], axis=1)", (3, 2)),
        ("jnp.concatenate([jnp.ones((2, 3)), jnp.ones((4, 3))])", (6, 3)),
        ("jnp.array([[1, 2], [3, 4], [5, 6]])", (3, 2)),
        ("rng.normal(size=(10, 2))", (10, 2)),
        ("rng.integers(0, 5, 4)", (4,)),
        ("np.random.randn(4, 5)", (4, 5)),
        ("np.random.uniform(0, 1, size=6)", (6,)),
        ("jax.random.normal(KEY, (7, 3))", (7, 3)),
        ("jax.random.uniform(KEY)", ()),
        ("jax.random.normal(KEY, (jax.device_count(), 3))", (None, 3)),
        ("jnp.ones((2, 3)).astype(jnp.int32).ravel()", (6,)),
        ("jnp.arange(6.0).reshape(3, 2) / 10.0", (3, 2)),
        ("2.0 * jnp.ones(3) - 1", (3,)),
        ("np.ones((3, 1)) * np.zeros(4)", (3, 4)),
        ("np.ones((2, 1, 5)) + np.ones((4, 1)) * 2", (2, 4, 5)),
        ("jnp.float32(5.0)", ()),
        ("np.int32(3)", ()),
    ],
)
def test_array_constructors_give_the_shape_numpy_gives(tmp_path: Path, expr: str, shape: tuple[Any, ...]) -> None:
    value = _value_of(tmp_path, PRELUDE + f"RESULT = {expr}\nprint(RESULT)\n")
    assert value == Array(shape)
    if None not in shape:  # the oracle: the real array
        namespace: dict[str, Any] = {"jax": jax, "jnp": jnp, "np": np}
        exec(PRELUDE, namespace)
        assert np.shape(eval(expr, namespace)) == shape


@pytest.mark.parametrize(
    "expr",
    [
        "jnp.ones(N)",  # N unread: a vector or a matrix
        "jnp.arange(0.0, 1.0, 0.1)",  # the count depends on float rounding
        "jnp.arange(12).reshape(5, -1)",  # JAX raises at the reshape
        "np.random.normal(0.0, 1.0)",  # no size: a scalar
        "rng.normal()",
        "jnp.ones((2, 3)).sum(0)",
        "jnp.linspace(jnp.zeros(3), 1.0, 5)",  # (5, 3): array endpoints add axes
        "jnp.stack([jnp.ones(3), jnp.ones(4)])",  # JAX raises
        "jnp.array([[1, 2], [3]])",  # ragged
        "some_function((2, 3))",
        "jnp.ones(3) + jnp.ones(4)",  # JAX raises at the addition
        "jnp.ones((2, 3)) @ jnp.ones((3, 4))",  # not elementwise
        "jnp.ones(3) + N",  # N may be an array
        "jnp.float32(N)",
    ],
)
def test_what_it_cannot_know_is_unknown(tmp_path: Path, expr: str) -> None:
    value = _value_of(tmp_path, PRELUDE + f"N = len(__file__)\nRESULT = {expr}\nprint(RESULT)\n")
    assert value is UNKNOWN


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("IN = (None, 0)\nprint(IN)\n", (None, 0)),
        ("IN = [None, 0]\njax.vmap(f, in_axes=IN)\n", [None, 0]),
        ("IN = [None, 0]\nIN.append(1)\njax.vmap(f, in_axes=IN)\n", UNKNOWN),
        ("IN = {'a': 0}\nIN['b'] = 1\njax.vmap(f, in_axes=IN)\n", UNKNOWN),
        ("IN = [0]\nmutate(IN)\njax.vmap(f, in_axes=IN)\n", UNKNOWN),
        ("IN = 0\nIN = 1\nprint(IN)\n", UNKNOWN),
        ("IN = 0\nIN += 1\nprint(IN)\n", UNKNOWN),
        ("for IN in (0, 1):\n    print(IN)\n", UNKNOWN),
        ("if flag:\n    IN = 0\nelse:\n    IN = 1\nprint(IN)\n", UNKNOWN),
        ("IN = 0\ndef g():\n    global IN\n    IN = 1\nprint(IN)\n", UNKNOWN),
        ("A = (0, None)\nIN = A\nprint(IN)\n", (0, None)),
        ("N = jax.device_count()\nIN = N\nprint(IN)\n", DEVICES),
        ("X = np.zeros((4, 3))\nX.resize((5, 3))\nIN = X\nprint(IN)\n", UNKNOWN),
        ("X = np.zeros((4, 3))\nIN = X\nprint(IN)\n", Array((4, 3))),
        ("A = [0, 1]\nIN = [A, A + [2]]\nprint(IN)\n", [[0, 1], [0, 1, 2]]),
        ("A = [0, 1]\nIN = [A]\nIN[0].append(2)\nprint(IN)\n", UNKNOWN),  # A changed through IN
        ("A = [0, 1]\nB = [A]\nB[0].append(2)\nIN = A\nprint(IN)\n", UNKNOWN),
        ("A = [0]\nIN = (A, 1) + (2,)\nprint(IN)\n", ([0], 1, 2)),
        ("IN = [jnp.ones(n) for n in range(1, 4)]\nprint(IN)\n", [UNKNOWN] * 3),
        ("IN = [n for n in range(3) if n]\nprint(IN)\n", UNKNOWN),
        ("IN = [n for n in range(5, 1005)]\nprint(IN)\n", [UNKNOWN] * 1000),
        ("IN = [n for n in range(30_000_000)]\nprint(IN)\n", UNKNOWN),  # longer than a pytree: not built
    ],
)
def test_names_are_followed_only_when_certain(tmp_path: Path, source: str, expected: Any) -> None:
    assert _value_of(tmp_path, PRELUDE + "flag = len(__file__) > 3\n" + source, "IN") == expected


def test_a_parameter_is_the_value_every_visible_call_gives(tmp_path: Path) -> None:
    source = PRELUDE + "def run(x, axis=1):\n    return axis\n\nrun(1)\nrun(2, axis=1)\n"
    assert _value_of(tmp_path, source, "axis") == 1
    source = PRELUDE + "def run(x, axis=1):\n    return axis\n\nrun(1)\nrun(2, 0)\n"
    assert _value_of(tmp_path, source, "axis") is UNKNOWN
    source = PRELUDE + "def run(x, axis=1):\n    return axis\n"  # no call here: others may pass anything
    assert _value_of(tmp_path, source, "axis") is UNKNOWN
    source = PRELUDE + "def run(x, axis=1):\n    return axis\n\nrun(1, **options)\n"
    assert _value_of(tmp_path, source, "axis") is UNKNOWN


def test_a_constant_of_another_linted_file(tmp_path: Path) -> None:
    (tmp_path / "config.py").write_text("AXES = (None, 0)\nMUTABLE = [None, 0]\n")
    main = tmp_path / "main.py"
    main.write_text("from config import AXES, MUTABLE\nprint(AXES, MUTABLE)\n")
    project = Project([main, tmp_path / "config.py"])
    module = project.module(main)
    assert module is not None
    assert project.values.of(module.loads["AXES"][0], module) == (None, 0)
    assert project.values.of(module.loads["MUTABLE"][0], module) is UNKNOWN  # the other file may change it
    main.write_text("import config\nfrom config import AXES\nconfig.AXES = (0, 0)\nprint(AXES)\n")
    project = Project([main, tmp_path / "config.py"])
    module = project.module(main)
    assert module is not None
    assert project.values.of(module.loads["AXES"][0], module) is UNKNOWN


def test_a_name_has_one_value_whichever_read_comes_first(tmp_path: Path) -> None:
    """A name 30 names from its array is past the depth limit (unknown), one 12 names from
    it is in reach: reading one first must not change what the other reads."""
    chain = "A0 = jnp.ones((3, 4))\n" + "".join(f"A{i} = A{i - 1}\n" for i in range(1, 31))
    path = tmp_path / "case.py"
    path.write_text(PRELUDE + chain + "print(A12, A30)\n")
    for order in (["A12", "A30"], ["A30", "A12"]):
        project = Project([path])
        module = project.module(path)
        assert module is not None
        read = {name: project.values.of(module.loads[name][-1], module) for name in order}
        assert read == {"A12": Array((3, 4)), "A30": UNKNOWN}, order


# ------------------------------------------------------------------ findings vs JAX


def _findings(tmp_path: Path, source: str) -> set[str]:
    path = tmp_path / "case.py"
    path.write_text(source)
    return {f.code for f in lint_files([path])[0]}


_SHAPES = st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)


@settings(max_examples=60, deadline=None)
@given(
    shapes=st.lists(_SHAPES, min_size=1, max_size=3),
    axes=st.lists(
        st.one_of(st.none(), st.integers(-3, 3), st.tuples(st.integers(0, 1), st.integers(0, 1))),
        min_size=1,
        max_size=3,
    ),
    scalar=st.one_of(st.none(), st.sampled_from(["3", "0.5", "True"])),
    kind=st.sampled_from(["vmap", "pmap"]),
    axis_size=st.one_of(st.none(), st.integers(1, 4)),
)
def test_findings_at_calls_are_real_jax_errors(
    tmp_path_factory: pytest.TempPathFactory,
    shapes: list[tuple[int, ...]],
    axes: list[int | None | tuple[int, int]],
    scalar: str | None,
    kind: str,
    axis_size: int | None,
) -> None:
    """Whenever AX013-AX017 is reported for a generated call, running it raises; and a
    generated call that raises one of the errors these codes describe is reported."""
    args = [f"jnp.ones({s!r})" for s in shapes] + ([scalar] if scalar is not None else [])
    axes = (axes * len(args))[: len(args)]
    params = ", ".join(f"a{i}" for i in range(len(args)))
    size = f", axis_size={axis_size}" if axis_size is not None and kind == "vmap" else ""
    source = (
        "import jax\nimport jax.numpy as jnp\n\n"
        f"def f({params}):\n    return 0.0\n\n"
        "def run():\n"
        f"    return jax.{kind}(f, in_axes={tuple(axes)!r}{size})({', '.join(args)})\n"
    )
    codes = _findings(tmp_path_factory.mktemp("gen"), source) & {"AX013", "AX014", "AX015", "AX016", "AX017"}
    namespace: dict[str, Any] = {}
    exec(compile(source, "case.py", "exec"), namespace)
    try:
        namespace["run"]()
    except (ValueError, TypeError, IndexError) as err:
        raised: BaseException | None = err
    else:
        raised = None
    if codes:
        assert raised is not None, source
    elif raised is not None and kind == "vmap":
        text = str(raised)
        # The errors these codes stand for are all found when every shape is stated.
        assert not any(
            s in text
            for s in (
                "inconsistent sizes",
                "rank should be at least",
                "at least one non-None value in in_axes",
                "tree prefix",
            )
        ), (source, text)

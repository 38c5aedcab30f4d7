"""The `axischeck` command, run as a user would (subprocess), including bad input."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every test here runs the command in a subprocess

EINSUM = "(a,b),(b,c),(a,c)->(a,c)"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "axischeck", *args], capture_output=True, text=True, timeout=120)


def test_predict_prints_shape_and_table() -> None:
    r = cli("predict", EINSUM, "--in-axes", "(0,1,0)", "16x8x4", "4x16x2", "16x8x2", "--names", "x,y,z")
    assert r.returncode == 0, r.stderr
    assert "predicted: (16, 8, 2)" in r.stdout
    assert "batched signature: (B, a, b), (b, B, c), (B, a, c) -> (B, a, c)" in r.stdout
    assert "y    (4, 16, 2)     1        (4, 2)       (b, c)     b=4  c=2" in r.stdout


def test_explain_exits_1_with_the_explanation() -> None:
    r = cli("explain", EINSUM, "--in-axes", "(0,1,0)", "16x8x4", "5x16x2", "16x8x2", "--names", "x,y,z")
    assert r.returncode == 1
    assert "ArgumentError: vmap(in_axes=(0, 1, 0), out_axes=0): dimension 'b' disagrees: 4 from x, 5 from y" in r.stdout
    assert "'b' is axis 2 of x (size 4)" in r.stdout and "axis 0 of y (size 5)" in r.stdout


def test_check_mode_and_scalars() -> None:
    r = cli("predict", "n f, f o, -> n", "--check", "32x20", "20x1", "()")
    assert r.returncode == 0 and "predicted: (32,)" in r.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("predict", "(a,b", "3x3"), "unbalanced parentheses"),
        (("predict", "(a)->(a)", "--in-axes", "__import__('os').system('true')", "3x3"), "bad --in-axes"),
        (("predict", "(a)->(a)", "--in-axes", "1.5", "3x3"), "in_axes must be an int"),
        (("predict", "(a)->(a)", "3y3"), "bad shape '3y3'"),
        (("predict", "(a)->(a)", "3x3", "--bogus"), "unrecognized arguments: --bogus"),
        (("bogus",), "invalid choice"),
        (("predict", "(a)->(a)", "--names", "x,y", "3x3"), "--names needs 1"),
    ],
)
def test_malformed_input_exits_2_with_one_line(args: tuple[str, ...], fragment: str) -> None:
    r = cli(*args)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("axischeck: error:") and fragment in lines[0]


def test_shard_plans_a_mesh_this_machine_lacks() -> None:
    r = cli(
        "shard",
        "(n,k),(k,m)->(n,m)",
        "1024x16",
        "16x8",
        "--mesh",
        "data=64",
        "--in-specs",
        "[('data',), None]",
        "--out-specs",
        "('data',)",
        "--names",
        "x,w",
    )
    assert r.returncode == 0, r.stderr
    assert "predicted: (1024, 8); per device: (16, 8)" in r.stdout
    assert "x    (1024, 16)    P('data',)  (16, 16)" in r.stdout
    assert "w    (16, 8)       static      (16, 8)" in r.stdout
    uneven = cli(
        "shard",
        "(n,k)->(n,k)",
        "1000x16",
        "--mesh",
        "data=64,model=2",
        "--in-specs",
        "('data', 'model')",
        "--out-specs",
        "('data', 'model')",
    )
    assert uneven.returncode == 1
    assert "64 does not divide 1000" in uneven.stdout and "Mesh('data': 64, 'model': 2)" in uneven.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("shard", "(n)->(n)", "16", "--mesh", "x=4,x=2"), "bad --mesh"),
        (("shard", "(n)->(n)", "16", "--mesh", "x=0"), "bad --mesh"),
        (("shard", "(n)->(n)", "16", "--mesh", "x=4", "--in-specs", "[1]"), "bad --in-specs entry 1"),
        (("shard", "(n)->(n)", "16", "--mesh", "x=4", "--in-specs", "__import__('os')"), "bad --in-specs"),
        (("shard", "(n)->(n)", "16"), "--mesh"),
        (("shard", "(n)->(n)", "16", "--mesh", "x=4", "--names", "a,b"), "--names needs 1"),
    ],
)
def test_shard_bad_input_exits_2(args: tuple[str, ...], fragment: str) -> None:
    r = cli(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert fragment in r.stderr and "Traceback" not in r.stderr


def test_version() -> None:
    r = cli("--version")
    assert r.returncode == 0 and r.stderr == ""
    assert re.fullmatch(r"axischeck \d+\.\d+\.\d+\S*\n", r.stdout)


@pytest.mark.parametrize(
    "args",
    [
        ("predict", "(" + "9" * 5000 + ")->()", "3"),
        ("predict", "(a)->(a)", "²x3"),
        ("predict", "(a)->(a)", "--in-axes", "[" * 10_000, "3x3"),
        ("shard", "(n)->(n)", "16", "--mesh", "x=٣"),
        ("predict", "(a)->(a)", "--axis-size", "9" * 5000, "3x3"),
        ("",),
    ],
    ids=lambda a: repr(a)[:40],
)
def test_hostile_argv_exits_2_without_a_traceback(args: tuple[str, ...]) -> None:
    r = cli(*args)
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("axischeck: error:") and "Traceback" not in r.stderr


def test_infer_prints_the_signature_to_paste(tmp_path: Path) -> None:
    (tmp_path / "mymodel.py").write_text(
        "import jax.numpy as jnp\n\ndef op(x, y, z):\n    return jnp.einsum('ab,bc->ac', x, y) + z\n"
    )
    shapes = ("16x8x4", "4x16x2", "16x8x2")
    r = subprocess.run(
        [sys.executable, "-m", "axischeck", "infer", "mymodel:op", "--in-axes", "(0, 1, 0)", *shapes],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert r.returncode == 0 and r.stdout.strip() == '"(a,b),(b,c),(a,c)->(a,c)"', r.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "axischeck", "infer", "mymodel:missing", "3"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "mymodel has no missing" in bad.stderr


def test_explain_proposes_a_checked_fix() -> None:
    r = cli("explain", EINSUM, "--in-axes", "(0,0,0)", "16x8x4", "4x16x2", "16x8x2", "--names", "x,y,z")
    assert r.returncode == 1 and "Fix: in_axes=(0, 1, 0) would map y's axis 1 (size 16)" in r.stdout


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (("predict", "(a,b)->(a,b),(b,a)", "7x3x2"), "predicted: ((7, 3, 2), (7, 2, 3))"),
        (
            (
                "shard",
                "(n,k),(k,m)->(n,m),(n,m)",
                "1024x16",
                "16x8",
                "--mesh",
                "data=64",
                "--in-specs",
                "[('data',), None]",
                "--out-specs",
                "[('data',), ('data',)]",
            ),
            "predicted: ((1024, 8), (1024, 8)); per device: ((16, 8), (16, 8))",
        ),
    ],
    ids=["predict", "shard"],
)
def test_several_outputs_print_as_tuples(argv: tuple[str, ...], line: str) -> None:
    result = cli(*argv)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == line

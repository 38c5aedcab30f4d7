"""`axischeck lint` on hostile folders and files: it reports what it can and never hangs,
imports the linted code, or loses findings to one bad entry."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from axischeck._lint import lint, run

SRC = Path(__file__).parent.parent / "src"
BAD = "import jax\njax.vmap(lambda x: x, in_axes=(0, 0))\n"


def _command(cwd: Path, *args: str, importtime: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run(
        [sys.executable, *flags, "-m", "axischeck", "lint", "--no-config", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_a_symlink_loop_is_skipped_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "loop.py").symlink_to(tmp_path / "loop.py")
    (tmp_path / "bad.py").write_text(BAD)
    findings, stats = lint([str(tmp_path)], use_config=False)
    assert [f.code for f in findings] == ["AX001"]
    assert any("loop.py: a symlink loop" in s for s in stats.skipped)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_is_skipped_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "bad.py").write_text(BAD)
    done = _command(tmp_path, ".")  # reading the pipe would block: the timeout fails the test
    assert done.returncode == 1 and "AX001" in done.stdout
    assert "pipe.py: not a regular file" in done.stderr


def test_a_byte_order_mark_is_read_as_utf8(tmp_path: Path) -> None:
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + BAD.encode())
    findings, stats = lint([str(tmp_path / "bom.py")], use_config=False)
    assert [(f.line, f.code) for f in findings] == [(2, "AX001")] and stats.unparsable == []


def test_modules_in_the_working_directory_are_never_imported(tmp_path: Path) -> None:
    for name in ("tomllib", "ast", "argparse", "typing_extensions"):
        (tmp_path / f"{name}.py").write_text("raise SystemExit('the linted folder was imported')\n")
    (tmp_path / "bad.py").write_text(BAD)
    done = _command(tmp_path, "bad.py")
    assert done.returncode == 1 and "AX001" in done.stdout, done.stderr
    assert "imported" not in done.stderr


def test_long_sums_and_elif_chains_are_read(tmp_path: Path) -> None:
    """Generated code nests a 500-term sum and a 340-branch elif chain hundreds of levels
    deep; Python runs both, and lint reads them (a finding next to them is reported)."""
    branches = "".join(f"    elif code == {i}:\n        return x + {i}\n" for i in range(1, 340))
    terms = " + ".join(f"{i}.0" for i in range(500))
    (tmp_path / "generated.py").write_text(
        f"import jax\n\nTOTAL = {terms}\n\ndef op(code, x):\n    if code == 0:\n        return x\n"
        f"{branches}    return x * TOTAL\n\n" + BAD
    )
    findings, stats = lint([str(tmp_path / "generated.py")], use_config=False)
    assert [f.code for f in findings] == ["AX001"] and stats.skipped == []


def test_a_file_nested_too_deeply_is_skipped_with_a_warning(tmp_path: Path) -> None:
    """A tree deeper than the linter's recursion reaches leaves that file out, with a
    warning; the other files' findings stand (the run used to stop with exit status 2)."""
    (tmp_path / "deep.py").write_text(f"import jax\nx = a{'.b' * 1500}\ng = jax.vmap(abs)\n")
    (tmp_path / "bad.py").write_text(BAD)
    findings, stats = lint([str(tmp_path)], use_config=False)
    assert [f.code for f in findings] == ["AX001"]
    assert stats.skipped == [f"{tmp_path / 'deep.py'}: nested too deeply for the linter to read"]


def test_lint_imports_no_jax(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_text("")
    done = _command(tmp_path, "empty.py", importtime=True)
    assert done.returncode == 0, done.stderr
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "axischeck._lint" in loaded
    assert not {m for m in loaded if m == "jax" or m.startswith(("jax.", "jaxlib"))}


def test_lint_reads_annotations_without_jax(tmp_path: Path) -> None:
    """Annotations that declare no dims (`Optional[float]`, `list[int]`) are read without
    JAX; a file that declares dims may import it (its dims become pytrees)."""
    (tmp_path / "annotated.py").write_text(
        "from typing import Optional\nimport jax\n\n"
        "def f(x: jax.Array, y: Optional[float] = None, zs: list[int] = []) -> dict[str, int]:\n"
        "    return x\n\n"
        "g = jax.vmap(f, in_axes=(0, 0, 0))\n"
    )
    done = _command(tmp_path, "annotated.py", importtime=True)
    assert done.returncode == 0, done.stderr
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "axischeck._core._annotation_text" in loaded
    assert not {m for m in loaded if m == "jax" or m.startswith(("jax.", "jaxlib"))}


def test_run_prints_skipped_files_as_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("named pipes are POSIX")
    os.mkfifo(tmp_path / "pipe.py")
    assert run([str(tmp_path)], use_config=False) == 0
    assert "axischeck: warning: not checked," in capsys.readouterr().err


def test_a_run_leaves_its_syntax_trees_to_reference_counting(tmp_path: Path) -> None:
    """The run breaks its own cycles: what the collector finds afterwards is a few dozen
    objects, not the thousands of nodes of the linted files."""
    import gc

    from axischeck._lint import lint_files

    body = "".join(
        f"def f{i}(x, y):\n    return x * y\n\njax.vmap(f{i}, in_axes=(0, None))(jnp.ones((3, 2)), 2.0)\n"
        for i in range(50)
    )
    path = tmp_path / "many.py"
    path.write_text("import jax\nimport jax.numpy as jnp\n" + body)
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        lint_files([path])
        gc.disable()  # lint_files turns the collector back on
        assert gc.collect() < 200
    finally:
        if was_enabled:
            gc.enable()

"""Patch mode without touching the code: `axischeck run` and `pytest --axischeck`.

The oracle for `axischeck run` is plain `python` running the same program: same stdout, same
exit status. Programs run in subprocesses (each imports jax: about a second apiece), so
the subprocess count stays small; usage errors run in-process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from axischeck._cli import run as cli_run

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "src" / "axischeck" / "pytest_plugin.py"
TIMEOUT = 120

# What the program itself prints to stdout is compared with plain Python's; whether the
# patch is on goes to stderr, the one thing that must differ.
GOOD_PROGRAM = """\
import sys

import jax
import jax.numpy as jnp
from jax import vmap

print("name:", __name__)
print("argv:", sys.argv)
print("path0:", sys.path[0])
print("shape:", vmap(jnp.sum, in_axes=1)(jnp.ones((3, 4))).shape)
print("patched:", jax.vmap.__module__.startswith("axischeck"), vmap.__module__.startswith("axischeck"), file=sys.stderr)
sys.exit(3)
"""

# The seed article's einsum example with y's mapped axis (axis 1) of the wrong size.
AXIS_MISTAKE = """\
import jax
import jax.numpy as jnp


def complex_operation(x, y, z):
    return jnp.einsum("ab,bc->ac", x, y) + z


x, y, z = jnp.ones((16, 8, 4)), jnp.ones((4, 16, 2)), jnp.ones((16, 8, 2))
print(jax.vmap(complex_operation, in_axes=(0, 1, 0))(x, y, z).shape)
bad_y = jnp.ones((4, 5, 2))
jax.vmap(complex_operation, in_axes=(0, 1, 0))(x, bad_y, z)
"""


def python(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {"JAX_PLATFORMS": "cpu", **(os.environ if env is None else env)}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd, env=env)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.slow
def test_a_good_program_prints_and_exits_as_under_python(tmp_path: Path) -> None:
    write(tmp_path / "sub" / "prog.py", GOOD_PROGRAM)
    # Everything after the script is the program's, our own option names included.
    program_args = ("sub/prog.py", "--help", "-m", "x", "--", "run")
    plain = python(*program_args, cwd=tmp_path)
    patched = python("-m", "axischeck", "run", *program_args, cwd=tmp_path)
    assert plain.returncode == 3, plain.stderr
    assert patched.returncode == 3, patched.stderr
    assert patched.stdout == plain.stdout
    assert "argv: ['sub/prog.py', '--help', '-m', 'x', '--', 'run']" in patched.stdout
    assert f"path0: {(tmp_path / 'sub').resolve()}" in patched.stdout
    assert "name: __main__" in patched.stdout and "shape: (4,)" in patched.stdout
    assert plain.stderr == "patched: False False\n"
    assert patched.stderr == "patched: True True\n"


@pytest.mark.slow
def test_an_axis_mistake_exits_1_with_the_explanation_and_jaxs_text(tmp_path: Path) -> None:
    write(tmp_path / "einsum.py", AXIS_MISTAKE)
    r = python("-m", "axischeck", "run", "einsum.py", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stdout == "(16, 8, 2)\n"  # the good call ran, and printed, first
    # Python's own traceback layout, starting at the program (not at runpy or the runner).
    lines = r.stderr.splitlines()
    # The absolute path, as `python einsum.py` prints it (Python makes `__file__` absolute).
    script = tmp_path / "einsum.py"
    assert lines[:2] == ["Traceback (most recent call last):", f'  File "{script}", line 12, in <module>']
    assert "runpy" not in r.stderr and "_run.py" not in r.stderr
    assert "axischeck.ArgumentError: vmap(complex_operation, in_axes=(0, 1, 0), out_axes=0): " in r.stderr
    assert (
        "the mapped axes disagree on the batch size: size 16 at axis 0 of x, axis 0 of z; size 5 at axis 1 of y"
        in r.stderr
    )
    assert "JAX: ValueError: vmap got inconsistent sizes for array axes to be mapped" in r.stderr


# A program that configures JAX through the environment before its own `import jax`: JAX reads
# these settings when it is imported.
SETS_JAX_ENVIRONMENT = """\
import os

os.environ["JAX_ENABLE_X64"] = "1"

import jax
import jax.numpy as jnp
from jax import vmap

print(jnp.ones(1).dtype, jax.config.jax_enable_x64)
print("patched:", jax.vmap.__module__.startswith("axischeck"), vmap.__module__.startswith("axischeck"), file=sys.stderr)
""".replace("import os", "import os\nimport sys")

# `axischeck run` through its runner alone: the `axischeck` command's other subcommands may
# import jax when their module loads; the runner must not.
RUNNER = (
    "import sys\n"
    "from axischeck._run import parse_program, run_program\n"
    "sys.exit(run_program(parse_program(sys.argv[1:])))"
)


# An Equinox ensemble whose members and data disagree on the batch size, importing equinox
# before jax (the order isort and ruff give) or after it.
EQUINOX_FIRST = """\
import equinox as eqx
import jax
import jax.numpy as jnp


def run_member(w, x):
    return x @ w


eqx.filter_vmap(run_member)(jnp.ones((3, 4, 2)), jnp.ones((5, 4)))
"""


@pytest.mark.slow
@pytest.mark.parametrize("first", ["equinox", "jax"])
def test_equinox_is_routed_whichever_it_imports_first(tmp_path: Path, first: str) -> None:
    """A library imported before jax imports jax half-way through its own import: its
    transforms are routed once that import returns, and messages name the user's function
    and parameters, never Equinox's internals."""
    pytest.importorskip("equinox")
    program = EQUINOX_FIRST if first == "equinox" else "import jax\n" + EQUINOX_FIRST
    write(tmp_path / "ensemble.py", program)
    r = python("-m", "axischeck", "run", "ensemble.py", cwd=tmp_path)
    assert r.returncode == 1
    assert "eqx.filter_vmap(run_member" in r.stderr
    assert "size 3 at axis 0 of w; size 5 at axis 0 of x" in r.stderr
    assert "_dynamic_args" not in r.stderr and "_fun_wrapper" not in r.stderr


@pytest.mark.slow
def test_settings_a_program_makes_before_importing_jax_hold(tmp_path: Path) -> None:
    write(tmp_path / "x64.py", SETS_JAX_ENVIRONMENT)
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    plain = python("x64.py", cwd=tmp_path, env=env)
    patched = python("-c", RUNNER, "x64.py", cwd=tmp_path, env=env)
    assert plain.stdout == "float64 True\n", plain.stderr
    assert patched.returncode == 0, patched.stderr
    assert patched.stdout == plain.stdout
    assert "patched: True True" in patched.stderr


@pytest.mark.slow
def test_pytest_axischeck_keeps_settings_a_test_module_makes_before_importing_jax(tmp_path: Path) -> None:
    write(
        tmp_path / "test_x64.py",
        """\
        import os

        os.environ["JAX_ENABLE_X64"] = "1"

        import jax
        import jax.numpy as jnp

        import axischeck


        def test_x64_and_patched():
            assert jnp.ones(1).dtype == jnp.float64
            assert jax.vmap is axischeck.vmap
        """,
    )
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    r = python("-m", "pytest", "-p", "no:cacheprovider", "--axischeck", "test_x64.py", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "axischeck: patch mode on: jax.vmap, jax.pmap, jax.shard_map" in r.stdout


# Prints what Python gives a script's module, and reads a file next to it after a chdir.
MODULE_ATTRIBUTES = """\
import os
import sys

print("file:", __file__)
print("loader:", type(__loader__).__name__, __loader__.name, __loader__.path)
print("spec:", __spec__, "cached:", __cached__, "package:", __package__)
print("argv:", sys.argv, "path0:", sys.path[0], "main:", sys.modules["__main__"].__dict__ is globals())
print("code:", sys._getframe().f_code.co_filename)
os.chdir("/")
with open(os.path.join(os.path.dirname(__file__), "data.txt")) as f:
    print("data:", f.read())
"""


@pytest.mark.slow
def test_a_script_in_a_folder_gets_what_python_gives_it(tmp_path: Path) -> None:
    write(tmp_path / "proj" / "prog.py", MODULE_ATTRIBUTES)
    write(tmp_path / "proj" / "data.txt", "next to the script")
    plain = python("proj/prog.py", "a", cwd=tmp_path)
    patched = python("-m", "axischeck", "run", "proj/prog.py", "a", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert patched.returncode == 0, patched.stderr
    assert patched.stdout == plain.stdout
    assert f"file: {tmp_path / 'proj' / 'prog.py'}" in patched.stdout
    assert "loader: SourceFileLoader __main__ " in patched.stdout
    assert not (tmp_path / "proj" / "__pycache__").exists(), "python writes no bytecode for its main file"


@pytest.mark.slow
def test_run_m_runs_a_module_of_a_package_on_the_cwd(tmp_path: Path) -> None:
    write(tmp_path / "pkg" / "__init__.py", "from jax import vmap as vmap_at_import\n")
    write(
        tmp_path / "pkg" / "tool.py",
        """\
        import sys

        import axischeck
        import pkg
        from jax import vmap

        print(__name__, sys.argv[1:], sys.path[0], sys.argv[0].endswith("tool.py"))
        # bound when the package was imported, before the program ran: swapped all the same
        print(vmap is axischeck.vmap, pkg.vmap_at_import is axischeck.vmap)
        """,
    )
    console_script = Path(sys.executable).with_name("axischeck")  # the installed `axischeck` command
    env = {"JAX_PLATFORMS": "cpu", **os.environ}
    r = subprocess.run(
        [str(console_script), "run", "-m", "pkg.tool", "a", "--b"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=tmp_path,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [f"__main__ ['a', '--b'] {tmp_path.resolve()} True", "True True"]


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        ((), "run needs a program"),
        (("missing.py",), "can't open file 'missing.py'"),
        (("-m",), "run -m needs a module name"),
        (("-m", "axischeck_no_such_module.sub"), "no module named 'axischeck_no_such_module.sub'"),
        (("-m", "1bad"), "'1bad' is not a module name"),
        (("-m", "json"), "'json' is a package with no __main__ module"),
        (("--verbose", "prog.py"), "run does not take the option '--verbose'"),
        (("--",), "run needs a script after '--'"),
        (("bad\nname.py",), "can't open file 'bad\\nname.py'"),
    ],
)
def test_our_usage_errors_exit_2_with_one_line(
    argv: tuple[str, ...], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = (list(sys.argv), list(sys.path))
    assert cli_run(["run", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("axischeck: error: ") and fragment in err, err
    assert (sys.argv, sys.path) == saved  # nothing left behind, even after looking for a module


def test_run_help_is_ours_only_before_the_program(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_run(["run", "--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: axischeck run SCRIPT [ARG ...]")


@pytest.mark.slow
def test_the_run_command_line_reaches_the_runner() -> None:
    """The `axischeck` command itself, in a subprocess: one line, exit 2, no traceback."""
    r = subprocess.run([sys.executable, "-m", "axischeck", "run"], capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("axischeck: error: run needs a program") and r.stderr.count("\n") == 1


PLUGIN_TEST = """\
import jax
import axischeck
from axischeck import _patch
from jax import vmap
from jax._src.api import vmap as internal_vmap  # not through `jax.vmap`: swapped after collection


def test_the_session_sees_the_transform_it_asked_for(request):
    on = request.config.getoption("--axischeck")
    ours, jaxs = axischeck.vmap, _patch.originals()["vmap"]
    assert vmap is (ours if on else jaxs)
    assert internal_vmap is (ours if on else jaxs)
    assert jax.vmap is (ours if on else jaxs)
    assert isinstance(vmap(abs), axischeck.Vmapped) == on
    assert (type(vmap(abs)).__module__ == "axischeck") == on
"""


@pytest.mark.slow
def test_pytest_axischeck_runs_the_session_patched_and_only_when_asked(tmp_path: Path) -> None:
    write(tmp_path / "test_patched.py", PLUGIN_TEST)
    base = ("-m", "pytest", "-p", "no:cacheprovider", "test_patched.py")
    on = python(*base, "--axischeck", cwd=tmp_path)
    assert on.returncode == 0, on.stdout + on.stderr
    assert "axischeck: patch mode on: jax.vmap, jax.pmap, jax.shard_map" in on.stdout
    off = python(*base, cwd=tmp_path)
    assert off.returncode == 0, off.stdout + off.stderr
    assert "patch mode" not in off.stdout
    assert "axischeck-" in off.stdout  # loaded (the entry point), and idle


@pytest.mark.slow
def test_the_plugin_module_imports_no_jax() -> None:
    """Its own imports: pytest and nothing of axischeck or jax until `--axischeck`."""
    code = (
        "import runpy, sys\n"
        "sys.modules['jax'] = None  # any import of jax now raises ImportError\n"
        f"hooks = runpy.run_path({str(PLUGIN)!r})\n"
        "assert 'pytest_addoption' in hooks\n"
        "loaded = [n for n, m in sys.modules.items() if m is not None and n.split('.')[0] in ('axischeck', 'jax')]\n"
        "assert not loaded, loaded\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr


@pytest.mark.slow
def test_loading_the_entry_point_imports_no_jax() -> None:
    code = (
        "import sys\n"
        "sys.modules['jax'] = None\n"
        "from importlib.metadata import entry_points\n"
        "(plugin,) = [e for e in entry_points(group='pytest11') if e.name == 'axischeck']\n"
        "plugin.load()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr

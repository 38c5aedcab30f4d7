"""`axischeck lint`: axis mistakes found in source code, without importing or running it.

    python -m axischeck lint src/ tests/ [--format text|json|sarif|github]

Files are read as text with `ast`. The linter finds every `vmap`, `pmap`, `shard_map`
and `smap` application (`jax.*` and `axischeck.*`, imported aliases, `functools.partial`
decorators, factories like `@ax.vmap(in_axes=...)`, methods), resolves the function it
maps when that function is bound once in the same file or in another linted file, and
reports what is certain without running anything. Signatures and annotations are read
by axischeck's own parser (`Annotated[Array, "a b"]`, jaxtyping's `Float[Array, "a b"]`).

Codes (stable; each finding names the transform, the argument and what JAX would do):

- AX001 in_axes has a different number of entries than the positional arguments: more
  than the function's positional parameters (none of them `*args`), fewer than its
  required ones (unless a call passes the rest by keyword), or a call that passes another
  number. `self` counts for a method decorated in its class body, as JAX counts it.
- AX002 in_axes / out_axes holds a value JAX refuses: a str, float, bool or other non-int
  leaf, a top-level in_axes that is not an int, None or tuple, a pmap in_axes list.
- AX003 in_axes gives an axis to an argument passed by keyword (JAX maps keyword arguments
  over axis 0 and counts only positional ones), to a keyword-only parameter, or is a dict
  of parameter names.
- AX004 out_axes (or shard_map's out_specs) does not match the returned tuple: another
  length, a list or a dict for a tuple (every return must be a tuple literal).
- AX005 a collective (`lax.psum`, `pmean`, `pmax`, `pmin`, `all_gather`, `psum_scatter`,
  `all_to_all`, `ppermute`, `axis_index`) names an axis that no enclosing transform binds,
  on a path from the top level of the file that the linter sees completely.
- AX006 an axis_name is bound twice in one nest: the inner binding hides the outer one
  (JAX allows it, so this is a warning).
- AX007 `signature=` declares more inputs than the function has parameters, or names
  parameters it does not have.
- AX008 `signature=` and the function's annotations give one argument different ranks.
- AX009 an in_axes / out_axes entry is out of range for the declared per-example rank r
  (it must be in [-(r+1), r]).
- AX010 shard_map's in_specs has another number of entries than the positional arguments.
- AX011 a `PartitionSpec` has more entries than the declared rank of its argument/output.
- AX012 `signature=` is not a signature axischeck's parser can read.
- AX013 at a call of a vmap / pmap, the mapped axes of the arguments (and `axis_size`)
  have different sizes, from shapes the file states (`jnp.ones((10, 4))`, ...).
- AX014 at a call, in_axes asks for an axis outside [-r, r) of an argument whose stated
  shape has rank r.
- AX015 at a call, every in_axes entry is None, the call passes no keyword argument and
  there is no `axis_size`: nothing is mapped, and JAX raises.
- AX016 at a call, in_axes maps a Python scalar (`pmap(f)(x, 10)`): it has no axis.
- AX017 at a call, in_axes is not a tree prefix of the arguments: a tuple of axes for an
  argument that is one array (`in_axes=((0, 1), (0, 1))`: one vmap maps one axis), a
  tuple for a dict, or a tuple of another length.
- AX018 out_axes is None for an output the mapped function computes from a mapped
  argument (`x * 2.0`, `jax.random.normal(key, ...)` of a mapped key): vmap and smap
  raise, pmap silently returns device 0's value.
- AX019 a psum of a value already summed over the same axis (`psum(psum(x, "i"), "i")`):
  JAX multiplies it by the axis size without a word (a warning).
- AX020 at a call of a shard_map, an argument's dimension is not a multiple of the sizes
  of the mesh axes its PartitionSpec splits it over (`jax.make_mesh` with literal sizes).
- AX021 inside jax.shard_map, a `lax.scan` carry that starts as an array built from
  constants (the same on every device) and comes back varying along a mesh axis.
- AX022 a mapped function draws from a `jax.random` key that is the same for every
  example or device: a parameter with None in in_axes (`P()` in in_specs), a closed-over
  key, or a key made inside from a constant seed (an `nnx.vmap` that broadcasts a module
  of a file that builds an `nnx.Dropout`, too). JAX runs it; a warning.
- AX023 a transform given a keyword it does not take (`axis=`, `in_axis=`, `out_axis=`,
  `check_rep=`), with the option meant: JAX raises TypeError when it is made.
- AX024 at a call, an iterator (`zip(...)`, `map(...)`, a generator expression) passed
  where in_axes maps an argument: JAX maps arrays, not the items an iterator yields.
- AX025 a shard_map whose mesh has an axis of size 1 that in_specs splits the output's
  source over and out_specs leaves out: the replication check reads types, not sizes.
- AX026 at a call, a function (a lambda, a `def` of the file, `jax.nn.softplus`) passed
  where in_axes maps an argument: it has no axis (pmap: `static_broadcasted_argnums`).
- AX027 a vmap or pmap decorating a method of a plain class (no base, no class
  decorator) whose in_axes maps `self`: the object is no array and no pytree.
- AX028 a shard_map or smap that splits no argument (in_specs all `P()`, smap's
  `in_axes=None`) but splits its output: every device computes the same block, and JAX
  stacks the identical copies.
- AX029 at a call, a vmap or pmap result combined (`+ - * /`) with an argument the call
  mapped along another axis than out_axes stacks the result on: the two layouts of one
  batch meet by broadcasting.

Values are read one step away from the transform (`_values`): names bound once,
parameters every visible call gives one value, `functools.partial`, and the shapes of
arrays built with a literal or constant shape (`_shapes`). An unknown value never
produces a finding.

Markdown files (docs, MyST notebooks) are linted too when named, or with `--markdown` for
folders: their Python code cells, with the file's line numbers.

Suppress one line with `# axischeck: ignore[AX001]` (or `# axischeck: ignore` for every
code); configure `paths`, `exclude` and `disable` in `[tool.axischeck.lint]` of the nearest
pyproject.toml. Exit status: 0 when clean, 1 with findings, 2 for usage errors.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ._config import Config, LintUsageError, find_pyproject, load_config, parse_codes, python_files
from ._output import FORMATS, render
from ._project import Stats, lint_files
from ._rules import RULES, Finding, Rule

__all__ = [
    "FORMATS",
    "RULES",
    "Finding",
    "LintUsageError",
    "Rule",
    "Stats",
    "lint",
    "lint_files",
    "run",
]


def lint(
    paths: Sequence[str],
    *,
    disable: Sequence[str] = (),
    exclude: Sequence[str] = (),
    use_config: bool = True,
    markdown: bool = False,
) -> tuple[list[Finding], Stats]:
    """Lint `paths` (files or folders); without paths, those of `[tool.axischeck.lint]`."""
    start = Path(paths[0]) if paths else Path.cwd()
    config = load_config(find_pyproject(start)) if use_config else Config()
    given = list(paths)
    if not given:
        if not config.paths or config.root is None:
            raise LintUsageError("no PATH given and no paths in [tool.axischeck.lint] of a pyproject.toml")
        given = [str(config.root / p) for p in config.paths]
    off = config.disable | parse_codes(disable, "--disable")
    skipped: list[str] = []
    files = list(python_files(given, (*config.exclude, *exclude), config.root, markdown, skipped))
    display = {f: _display(f) for f in files}
    findings, stats = lint_files(files, display)
    stats.skipped.extend(skipped)
    return [f for f in findings if f.code not in off], stats


def _display(path: Path) -> str:
    """The path relative to the working directory when it is below it (as tools print it)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if rel.startswith("..") else rel


def run(
    paths: Sequence[str],
    fmt: str = "text",
    disable: Sequence[str] = (),
    exclude: Sequence[str] = (),
    use_config: bool = True,
    markdown: bool = False,
    statistics: bool = False,
    version: str = "",
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """The `axischeck lint` command: print the findings, return the exit status (0 or 1).

    Raises `LintUsageError` for bad input (the command line turns it into status 2).
    """
    out = out or sys.stdout
    err = err or sys.stderr
    if fmt not in FORMATS:
        raise LintUsageError(f"unknown --format {fmt!r} (choose from {', '.join(FORMATS)})")
    findings, stats = lint(paths, disable=disable, exclude=exclude, use_config=use_config, markdown=markdown)
    for problem in stats.skipped:
        print(f"axischeck: warning: not checked, {problem}", file=err)
    for problem in stats.unparsable:
        print(f"axischeck: warning: not checked, cannot parse {problem}", file=err)
    text = render(findings, fmt, version)
    if text:
        print(text, file=out)
    if statistics:
        print(
            f"axischeck lint: {stats.files} files, {stats.lines} lines, {stats.analysed} naming a transform,"
            f" {stats.sites} transform sites ({stats.understood} with the mapped function resolved),"
            f" {stats.calls_read} calls with every argument read, {len(findings)} findings",
            file=err,
        )
    return 1 if findings else 0

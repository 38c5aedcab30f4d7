"""Run the real-bug corpus: each case's programs under plain JAX, under `ax.patch()`, and
with a fix axischeck offers applied.

The corpus has two sets: `cases/` (the tuning set: the advice was developed against it) and
`heldout/` (bugs written down before the advice code they measure, scored apart). A case is
a folder `<set>/<NN>_<slug>/` holding `buggy.py`, `fixed.py` (each defines
`main()` returning arrays or a pytree of them, and does nothing else at import) and
`case.toml`:

- `url`, `title`: the public report the case was rebuilt from.
- `transform`: `vmap`, `pmap`, `shard_map` or `smap`, or a library's transform:
  `eqx.filter_vmap`, `eqx.filter_pmap`, `nnx.vmap`, `nnx.pmap`.
- `symptom`: `"error"` (plain JAX raises on buggy.py) or `"silent"` (it runs, with a result
  other than fixed.py's).
- `jax_error`: a regex matched against `"<ExceptionType>: <message>"` of JAX's own error.
- `facts`: regexes that axischeck's message (exception text, its notes, or a warning) must
  all match: the argument, the sizes in conflict, the name...
- `real_fix`: the fix the maintainers or reporter applied, as transform options written as
  keyword arguments (`in_axes=(0, 0)`, `out_specs=P(None, 'model')`,
  `in_axes=(eqx.if_array(0), None)`, `in_axes=(nnx.StateAxes({nnx.Param: 0, ...: None}),)`),
  or `""` when it is not an option change (fixed.py shows it).
- `real_fix_target` (optional): which transform the real fix changes, `name` or `name@k`
  (the k-th transform of a function of that name); by default every transform in buggy.py.
- `lint_line`: the line of buggy.py a static linter should point at (0: nowhere).
- `notes`: free text.
- `jax_fixed_in` (optional): the first JAX release in which buggy.py no longer fails
  (JAX fixed the bug itself): on that release and later, buggy.py must run under
  axischeck as under plain JAX, and the case is not scored.
- `[known_gap]` (optional): `facts = "..."` and/or `fix = "..."`, what axischeck gets wrong
  today; the matching test is a strict xfail, so it turns red once axischeck improves.
  `since = "0.12.1"`: the gap in the facts holds from that JAX release on only;
  `until = "0.12.1"`: before that release only.

A fix is read from the exception's structured `suggestions` (`Suggestion.as_kwargs()`),
else from a `Fix: name=value` line of the message or its notes; it is applied by
re-running buggy.py under plain JAX with the transform around the named function given
those options.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.util
import inspect
import itertools
import re
import sys
import tomllib
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import jax
import numpy as np

CASES = Path(__file__).parent / "cases"
HELDOUT = Path(__file__).parent / "heldout"
TRANSFORMS = ("vmap", "pmap", "shard_map", "smap")
# The libraries' transforms a case may name, as (module, attribute): a fix to one of them is
# applied by wrapping that attribute as JAX's are wrapped.
LIBRARY_TRANSFORMS = {
    "eqx.filter_vmap": ("equinox", "filter_vmap"),
    "eqx.filter_pmap": ("equinox", "filter_pmap"),
    "nnx.vmap": ("flax.nnx", "vmap"),
    "nnx.pmap": ("flax.nnx", "pmap"),
}


@dataclass(frozen=True)
class Case:
    name: str
    folder: Path
    url: str
    title: str
    transform: str
    symptom: str
    jax_error: str
    facts: tuple[str, ...]
    real_fix: str
    real_fix_target: str | None
    lint_line: int
    notes: str
    gap_facts: str = ""
    gap_fix: str = ""
    jax_fixed_in: str | None = None

    @property
    def fixed_by_jax(self) -> bool:
        """Whether the installed JAX has fixed the bug itself (see `jax_fixed_in`)."""
        return self.jax_fixed_in is not None and _release(jax.__version__) >= _release(self.jax_fixed_in)

    @property
    def buggy(self) -> Path:
        return self.folder / "buggy.py"

    @property
    def fixed(self) -> Path:
        return self.folder / "fixed.py"


def load_cases(root: Path = CASES) -> list[Case]:
    """The cases of one set: `CASES` (the tuning set) or `HELDOUT`."""
    cases = []
    for folder in sorted(p for p in root.iterdir() if (p / "case.toml").exists()):
        data = tomllib.loads((folder / "case.toml").read_text())
        gap = data.get("known_gap", {})
        cases.append(
            Case(
                name=folder.name,
                folder=folder,
                url=data["url"],
                title=data["title"],
                transform=data["transform"],
                symptom=data["symptom"],
                jax_error=data.get("jax_error", ""),
                facts=tuple(data.get("facts", ())),
                real_fix=data.get("real_fix", ""),
                real_fix_target=data.get("real_fix_target"),
                lint_line=int(data.get("lint_line", 0)),
                notes=data.get("notes", ""),
                gap_facts=gap.get("facts", "") if _gap_applies(gap) else "",
                gap_fix=gap.get("fix", ""),
                jax_fixed_in=data.get("jax_fixed_in"),
            )
        )
    return cases


def _gap_applies(gap: dict[str, str]) -> bool:
    """Whether a known gap holds on the installed JAX: from its `since` release on, and
    before its `until` release, where it names them (another JAX answers the call
    otherwise, and the message with it)."""
    since, until, now = gap.get("since"), gap.get("until"), _release(jax.__version__)
    return (since is None or now >= _release(since)) and (until is None or now < _release(until))


def _release(version: str) -> tuple[int, ...]:
    """`0.12.1` -> (0, 12, 1); a suffix such as `.dev` is dropped."""
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


# ------------------------------------------------------------------ running programs


@dataclass
class Outcome:
    """What a run gave: a result, or an exception; and the warnings it raised."""

    result: Any = None
    error: BaseException | None = None
    warnings: list[str] = field(default_factory=list)

    def text(self) -> str:
        """Everything a user reads: the exception, its notes and the warnings."""
        parts = []
        if self.error is not None:
            parts.append(f"{type(self.error).__name__}: {self.error}")
            parts.extend(getattr(self.error, "__notes__", ()))
        parts.extend(self.warnings)
        return "\n".join(parts)


_counter = itertools.count()


def _import_fresh(path: Path) -> Any:
    name = f"_realbug_{path.parent.name}_{path.stem}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


def _run(path: Path) -> Outcome:
    outcome = Outcome()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = _import_fresh(path).main()
            outcome.result = jax.tree.map(np.asarray, result)
        except Exception as err:
            outcome.error = err
    outcome.warnings = [f"{w.category.__name__}: {w.message}" for w in caught if _relevant(w)]
    return outcome


def _relevant(w: warnings.WarningMessage) -> bool:
    return w.category.__module__.split(".")[0] == "axischeck"


def run_plain(path: Path) -> Outcome:
    """The program under JAX alone."""
    return _run(path)


def run_checked(path: Path) -> Outcome:
    """The program with `jax.vmap` and friends routed through axischeck."""
    import axischeck as ax

    with ax.patch():
        return _run(path)


# ------------------------------------------------------------------ comparing results


def same_bits(a: Any, b: Any) -> bool:
    """Equal pytrees of equal arrays: structure, shapes, dtypes and every bit."""
    la, ta = jax.tree.flatten(a)
    lb, tb = jax.tree.flatten(b)
    if ta != tb:
        return False
    return all(
        x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes()
        for x, y in zip(map(np.asarray, la), map(np.asarray, lb), strict=True)
    )


def same_values(a: Any, b: Any) -> bool:
    """Equal pytrees with the same shapes and values up to float rounding (a fix may
    reorder the arithmetic)."""
    la, ta = jax.tree.flatten(a)
    lb, tb = jax.tree.flatten(b)
    if ta != tb:
        return False
    return all(
        x.shape == y.shape and np.allclose(x, y, rtol=1e-5, atol=1e-6)
        for x, y in zip(map(np.asarray, la), map(np.asarray, lb), strict=True)
    )


# ------------------------------------------------------------------ reading fixes


@dataclass(frozen=True)
class Fix:
    """One fix axischeck offers: the transform options to change, and for which function."""

    text: str
    options: dict[str, Any]
    target: str | None  # the mapped function's name, from the error's transform
    # The options the error's transform was written with, where its title reads as
    # options: of several transforms of one function, the fix is for the one given them.
    written: dict[str, Any] = field(default_factory=dict)


OPTIONS = (
    "in_axes",
    "out_axes",
    "axis_name",
    "axis_size",
    "static_broadcasted_argnums",
    "in_specs",
    "out_specs",
    "mesh",
)
_FIX_LINE = re.compile(r"Fix: (.*)")
_OPTION = re.compile(r"\b(" + "|".join(OPTIONS) + r")=")


def _target(err: BaseException) -> str | None:
    transform = getattr(err, "transform", None)
    return _target_in(transform if isinstance(transform, str) else "\n".join(getattr(err, "__notes__", ())))


def _written(err: BaseException) -> dict[str, Any]:
    """The options in the error's transform title (`vmap(f, in_axes=(0, None), ...)`), or
    {} where they do not read as options."""
    transform = getattr(err, "transform", None)
    if not isinstance(transform, str) or "(" not in transform or not transform.endswith(")"):
        return {}
    _, _, rest = transform[transform.index("(") + 1 : -1].partition(", ")
    return parse_options(rest) or {}


def _target_in(text: str) -> str | None:
    """The function the first transform named in `text` maps."""
    match = re.search(r"\b(?:filter_)?(?:vmap|pmap|shard_map|smap)\(([\w<>.]+)", text)
    return match.group(1) if match else None


def _literal_prefix(text: str) -> str:
    """The Python value at the start of `text`: a quoted string, a bracketed value up to
    its closing bracket, or a bare value up to the first space or comma."""
    if text[:1] in "'\"":
        end = text.find(text[0], 1)
        return text[: end + 1] if end > 0 else text
    if text[:1] not in "([{":
        head = re.match(r"[\w.]+(?=\()", text)  # a call: P(...), eqx.if_array(0)
        if head is None:
            return re.split(r"[\s,;]", text, maxsplit=1)[0]
        return head.group(0) + _literal_prefix(text[head.end() :])
    depth, quote = 0, ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return text[: i + 1]
    return text


# The names an option's value may use besides literals, each resolved when it is read: the
# spellings the cases and axischeck's fixes write (`P(...)`, `eqx.if_array(0)`,
# `nnx.StateAxes({nnx.Param: 0, ...: None})`).
_VALUE_NAMES: dict[str, tuple[str, str]] = {
    "P": ("jax.sharding", "PartitionSpec"),
    "PartitionSpec": ("jax.sharding", "PartitionSpec"),
    "eqx": ("equinox", ""),
    "nnx": ("flax.nnx", ""),
}


def _value(node: ast.expr) -> Any:
    """The value an option's text writes: literals, containers, `...`, and calls of the
    names in `_VALUE_NAMES` and their attributes (never anything else: no eval)."""
    match node:
        case ast.Constant(value=value):
            return value
        case ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=int() | float() as number)):
            return -number
        case ast.Tuple(elts=items):
            return tuple(_value(item) for item in items)
        case ast.List(elts=items):
            return [_value(item) for item in items]
        case ast.Dict(keys=keys, values=values) if None not in keys:
            return {_value(k): _value(v) for k, v in zip(keys, values, strict=True) if k is not None}
        case ast.Name(id=name) if name in _VALUE_NAMES:
            module, attribute = _VALUE_NAMES[name]
            imported = importlib.import_module(module)
            return getattr(imported, attribute) if attribute else imported
        case ast.Attribute(value=ast.Name(id=name) as base, attr=attribute) if name in ("eqx", "nnx"):
            return getattr(_value(base), attribute)
        case ast.Call(func=func, args=args, keywords=keywords) if isinstance(func, (ast.Name, ast.Attribute)):
            return _value(func)(*map(_value, args), **{k.arg: _value(k.value) for k in keywords if k.arg})
    raise ValueError(f"not an option value: {ast.unparse(node)}")


def parse_options(text: str) -> dict[str, Any] | None:
    """`in_axes=(0, None), out_axes=1` -> {"in_axes": (0, None), "out_axes": 1}: keyword
    arguments of a transform (None when the text is not only that)."""
    try:
        call = ast.parse(f"f({text})", mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call) or call.args or any(k.arg not in OPTIONS for k in call.keywords):
        return None
    try:
        return {k.arg: _value(k.value) for k in call.keywords if k.arg is not None} or None
    except (ValueError, TypeError, AttributeError, ImportError):
        return None


def _parse_option(text: str) -> dict[str, Any] | None:
    """`in_axes=(0, 1) would map ...` -> {"in_axes": (0, 1)}: the first option assignment
    in the text and the value that follows it (None when it is no value of the forms
    `_value` reads)."""
    match = _OPTION.search(text)
    if not match:
        return None
    return parse_options(f"{match.group(1)}={_literal_prefix(text[match.end() :])}")


def fixes(outcome: Outcome) -> list[Fix]:
    """The fixes a run offers: its error's, structured ones first, or, where it raised
    none, its warnings' `Fix:` lines; text-only fixes whose option cannot be read are
    left out (they are not checkable)."""
    err = outcome.error
    if err is None:
        return [fix for warning in outcome.warnings for fix in _text_fixes(warning, _target_in(warning))]
    target, written = _target(err), _written(err)
    found = [
        Fix(
            s.text,
            {
                **s.as_kwargs(),
                **({"transpose": s.transposes[0]} if s.transposes else {}),
                **({"by_position": s.by_position} if getattr(s, "by_position", ()) else {}),
            },
            target,
            written,
        )
        for s in getattr(err, "suggestions", ())
        if not getattr(s, "pads", ())  # a padded argument: a change this harness does not apply
    ]
    if found:
        return found
    return _text_fixes("\n".join([str(err), *getattr(err, "__notes__", ())]), target, written)


def _text_fixes(text: str, target: str | None, written: dict[str, Any] | None = None) -> list[Fix]:
    """The options named in the `Fix:` lines of `text` (`written`: see `Fix`)."""
    found = []
    for line in _FIX_LINE.findall(text):
        if re.search(r"by position|positionally|nest one", line):  # a change of the call or the code, not an option
            continue
        for piece in re.split(r", or |; or ", line):
            options = _parse_option(piece)
            if options is not None:
                found.append(Fix(piece.strip(), options, target, written or {}))
    return found


def fix_texts(err: BaseException | None) -> list[str]:
    """Every `Fix:` line the user reads, checkable or not."""
    if err is None:
        return []
    text = "\n".join([str(err), *getattr(err, "__notes__", ())])
    return _FIX_LINE.findall(text)


# ------------------------------------------------------------------ applying a fix


def _name_of(fun: Any) -> str | None:
    """The function's name as messages give it: a callable object's is its class's."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    return getattr(fun, "__name__", None) or type(fun).__name__


def _matches(target: str | None, fun: Any, seen: dict[str, int]) -> bool:
    """Whether a transform of `fun` is the one `target` names: `name` (every transform
    of a function of that name), `name@k` (the k-th of them), or None (every transform)."""
    name = _name_of(fun) or ""
    seen[name] = seen.get(name, 0) + 1
    if target is None:
        return True
    wanted, _, k = target.partition("@")
    return wanted == name and (not k or int(k) == seen[name])


def _library_internal(fun: Any) -> bool:
    """Whether `fun` is a library's own wrapper (Equinox's or Flax's transforms call JAX's
    with one): a fix applies to the library's transform the program called, not to that."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    module = getattr(fun, "__module__", None) or type(fun).__module__
    return module.split(".")[0] in ("equinox", "flax")


def _transform_slots(path: Path) -> list[tuple[Any, str]]:
    """The (module, attribute) of every transform a fix may change in the program at
    `path`: JAX's, and Equinox's and Flax NNX's where the program imports them."""
    slots: list[tuple[Any, str]] = [(jax, name) for name in TRANSFORMS if hasattr(jax, name)]
    source = path.read_text()
    for module, attribute in LIBRARY_TRANSFORMS.values():
        if re.search(rf"\b(import|from) {module.split('.')[0]}\b", source):
            slots.append((importlib.import_module(module), attribute))
    return slots


@contextlib.contextmanager
def _overridden(fix: Fix, path: Path, applied: list[str]) -> Iterator[None]:
    """The program's transforms, with `fix.options` applied to the transforms `fix.target`
    names and, of those, the ones written with the options the fix changes as the error
    saw them (`fix.written`); `applied` collects the functions it was applied to."""
    slots = _transform_slots(path)
    originals = [(module, name, getattr(module, name)) for module, name in slots]
    transpose = fix.options.get("transpose")
    by_position = fix.options.get("by_position", ())
    options = {k: v for k, v in fix.options.items() if k not in ("transpose", "by_position")}
    seen: dict[str, int] = {}
    by_library: set[str] = set()  # functions a library's transform was given the fix for

    def wrap(original: Callable[..., Any], library: bool) -> Callable[..., Any]:
        signature = inspect.signature(original)

        def transform(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            fun = bound.arguments.get("f", bound.arguments.get("fun"))
            if not callable(fun):  # the decorator-factory form: transform(in_axes=...)(f)
                return functools.partial(transform, **kwargs)
            if _library_internal(fun) or (not library and _name_of(fun) in by_library):
                return original(*args, **kwargs)  # the JAX transform a library's makes of the function
            if not _matches(fix.target, fun, seen) or not _written_so(bound, fix):
                return original(*args, **kwargs)
            applied.append(_name_of(fun) or "")
            if library:
                by_library.add(_name_of(fun) or "")
            bound.arguments.update(options)
            mapped = original(*bound.args, **bound.kwargs)
            if transpose is None and not by_position:
                return mapped

            def call(*call_args: Any, **call_kwargs: Any) -> Any:
                call_args = list(call_args)
                if transpose is not None:
                    i, perm = transpose
                    call_args[i] = jax.numpy.transpose(call_args[i], perm)
                call_args += [call_kwargs.pop(name) for name in by_position]
                return mapped(*call_args, **call_kwargs)

            return call

        return transform

    try:
        for module, name, original in originals:
            setattr(module, name, wrap(original, library=module is not jax))
        yield
    finally:
        for module, name, original in originals:
            setattr(module, name, original)


APPLICABLE = frozenset((*OPTIONS, "transpose", "by_position"))


def applicable(fix: Fix) -> bool:
    return set(fix.options) <= APPLICABLE


def _written_so(bound: inspect.BoundArguments, fix: Fix) -> bool:
    """Whether a transform was written with the options the fix changes as the error's
    title gives them (True where the title gives none)."""
    given = {**{p.name: p.default for p in bound.signature.parameters.values()}, **bound.arguments}
    return all(k not in given or _same_option(given[k], v) for k, v in fix.written.items() if k in fix.options)


def _same_option(given: Any, written: Any) -> bool:
    try:
        return bool(given == written) or (
            isinstance(given, (tuple, list)) and isinstance(written, (tuple, list)) and list(given) == list(written)
        )
    except Exception:  # noqa: BLE001 - values that do not compare (arrays): not the title's
        return False


def run_with_fix(path: Path, fix: Fix) -> Outcome:
    """The program under plain JAX with the fix's options given to its transform: the one
    the error names, by its function and its options; by its function alone where no
    transform was written with the options the title gives (a title that normalises
    them)."""
    applied: list[str] = []
    with _overridden(fix, path, applied):
        outcome = _run(path)
    if applied or not fix.written:
        return outcome
    with _overridden(replace(fix, written={}), path, applied):
        return _run(path)


def real_fix(case: Case) -> Fix | None:
    """The case's `real_fix` as a Fix (None when it is not an option change)."""
    options = parse_options(case.real_fix) if case.real_fix else None
    return Fix(case.real_fix, options, case.real_fix_target) if options is not None else None


def real_fix_options(case: Case) -> dict[str, Any] | None:
    """The case's `real_fix` read as transform options (None when it is not one)."""
    fix = real_fix(case)
    return fix.options if fix is not None else None

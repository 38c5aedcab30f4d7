"""Array shapes a file states: what `jnp.ones((10, 4))` and friends return, from their arguments.

Every function here takes arguments already read by the interpreter (`_values`): ints,
tuples, lists, `Array`s, `DEVICES` (a device count), or `UNKNOWN`. A shape is a tuple of
sizes, each an int or None (a size the file does not fix, such as `jax.device_count()`).
Anything these functions are unsure of is `UNKNOWN`, never a guess: `jnp.ones(n)` with `n`
unread may be a vector or a matrix, so not even its rank is known.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._literals import UNKNOWN

Size = int | None
Shape = tuple[Size, ...]


@dataclass(frozen=True, slots=True)
class Array:
    """An array whose rank is known (and some or all of its sizes)."""

    shape: Shape

    @property
    def rank(self) -> int:
        return len(self.shape)

    def text(self) -> str:
        inner = ", ".join("?" if s is None else str(s) for s in self.shape)
        return f"({inner},)" if len(self.shape) == 1 else f"({inner})"


@dataclass(frozen=True, slots=True)
class Mesh:
    """A device mesh the file builds with `jax.make_mesh(shape, names)`: its axes' sizes."""

    sizes: tuple[tuple[str, int], ...]  # (axis name, size), in the mesh's order

    def size(self, name: str) -> int | None:
        return next((n for axis, n in self.sizes if axis == name), None)


@dataclass(frozen=True, slots=True)
class Spec:
    """A `PartitionSpec` with literal entries: per dimension, the mesh axes it is split over."""

    entries: tuple[tuple[str, ...], ...]  # () for None (not split)

    def text(self) -> str:
        parts = ["None" if not e else repr(e[0]) if len(e) == 1 else repr(e) for e in self.entries]
        return f"P({', '.join(parts)})"


def make_mesh(args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """`jax.make_mesh(axis_shapes, axis_names, ...)` with literal shapes and names."""
    shape = _argument(args, kwargs, 0, "axis_shapes")
    names = _argument(args, kwargs, 1, "axis_names")
    if not isinstance(shape, tuple) or not isinstance(names, tuple) or len(shape) != len(names):
        return UNKNOWN
    if not all(type(n) is int and n > 0 for n in shape) or not all(isinstance(n, str) for n in names):
        return UNKNOWN
    if len(set(names)) != len(names):
        return UNKNOWN
    return Mesh(tuple(zip(names, shape, strict=True)))


def partition_spec(args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """`P('x', None, ('a', 'b'))` with literal entries (`P(...)`'s `...` and keywords: unknown)."""
    if kwargs:
        return UNKNOWN
    entries: list[tuple[str, ...]] = []
    for a in args:
        if a is None:
            entries.append(())
        elif isinstance(a, str):
            entries.append((a,))
        elif isinstance(a, tuple) and a and all(isinstance(n, str) for n in a):
            entries.append(a)
        else:
            return UNKNOWN
    return Spec(tuple(entries))


class _Symbol:
    """An int the file cannot know but that is surely an int of at least 1."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


DEVICES: Any = _Symbol("<device count>")  # jax.device_count(), jax.local_device_count()
GENERATOR: Any = _Symbol("<numpy Generator>")  # np.random.default_rng(...)


def size_of(value: Any) -> Size | Any:
    """A size from a value: an int >= 0, None for DEVICES, UNKNOWN otherwise."""
    if type(value) is int and value >= 0:
        return value
    if value is DEVICES:
        return None
    return UNKNOWN


def shape_of(value: Any) -> Shape | Any:
    """A `shape` argument: an int or a tuple/list of sizes (an unread entry is a size the
    file does not fix; the rank is still the entry count). UNKNOWN when unsure."""
    single = size_of(value)
    if single is not UNKNOWN:
        return (single,)
    if not isinstance(value, (tuple, list)):
        return UNKNOWN
    sizes: list[Size] = []
    for v in value:
        s = size_of(v)
        if s is UNKNOWN:
            if type(v) is int or isinstance(v, (tuple, list, dict, str, float, Array)) or v is None:
                return UNKNOWN  # a negative size, or not a size at all: JAX raises, not ours to say
            s = None
        sizes.append(s)
    return tuple(sizes)


def _array(shape: Any) -> Any:
    return Array(shape) if isinstance(shape, tuple) else UNKNOWN


def _prod(shape: Shape) -> int | None:
    if any(s is None for s in shape):
        return None
    return math.prod(s for s in shape if s is not None)


# ------------------------------------------------------------------ constructors

# Positions of the `shape` argument (jnp / np array builders, `jax.random` samplers) and the
# shape when it is left out (None: it is required, or the result is not an array).
_BUILDERS: dict[str, tuple[int, str, Shape | None]] = {
    "ones": (0, "shape", None),
    "zeros": (0, "shape", None),
    "empty": (0, "shape", None),
    "full": (0, "shape", None),
}
_RANDOM_JAX: dict[str, tuple[int, str, Shape | None]] = {
    "normal": (1, "shape", ()),
    "uniform": (1, "shape", ()),
    "laplace": (1, "shape", ()),
    "logistic": (1, "shape", ()),
    "cauchy": (1, "shape", ()),
    "exponential": (1, "shape", ()),
    "gumbel": (1, "shape", ()),
    "rademacher": (1, "shape", ()),
    "randint": (1, "shape", None),
    "truncated_normal": (3, "shape", None),  # without one, the bounds' broadcast shape (see `construct`)
    "bernoulli": (2, "shape", None),
}
# numpy.random's module functions and a Generator's methods: `size`, without which they
# return a Python (or NumPy) scalar, which is left unknown.
_RANDOM_NUMPY: dict[str, tuple[int, str, Shape | None]] = {
    "normal": (2, "size", None),
    "uniform": (2, "size", None),
    "randint": (2, "size", None),
    "integers": (2, "size", None),
    "standard_normal": (0, "size", None),
    "random": (0, "size", None),
    "random_sample": (0, "size", None),
    "exponential": (1, "size", None),
    "laplace": (2, "size", None),
    "logistic": (2, "size", None),
    "poisson": (1, "size", None),
    "binomial": (2, "size", None),
    "beta": (2, "size", None),
    "gamma": (2, "size", None),
}
_NUMPY_LIBS = ("numpy", "jax.numpy")


def _argument(args: Sequence[Any], kwargs: dict[str, Any], position: int, keyword: str) -> Any:
    if keyword in kwargs:
        return kwargs[keyword]
    return args[position] if position < len(args) else _MISSING


_MISSING: Any = object()


def _shaped(args: Sequence[Any], kwargs: dict[str, Any], rule: tuple[int, str, Shape | None]) -> Any:
    position, keyword, default = rule
    value = _argument(args, kwargs, position, keyword)
    if value is _MISSING or value is None:
        return _array(default) if default is not None else UNKNOWN
    return _array(shape_of(value))


def construct(name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """The array a call of the function imported as `name` returns, or UNKNOWN."""
    lib, _, fn = name.rpartition(".")
    if lib in _NUMPY_LIBS:
        return _numpy_function(fn, args, kwargs)
    if lib == "jax.random" and fn == "truncated_normal" and _argument(args, kwargs, 3, "shape") in (_MISSING, None):
        bounds = [_argument(args, kwargs, i, k) for i, k in ((1, "lower"), (2, "upper"))]
        return Array(()) if all(type(b) in (int, float) for b in bounds) else UNKNOWN  # the bounds' broadcast
    if lib == "jax.random" and fn in _RANDOM_JAX:
        return _shaped(args, kwargs, _RANDOM_JAX[fn])
    if lib == "numpy.random":
        if fn in _RANDOM_NUMPY:
            return _shaped(args, kwargs, _RANDOM_NUMPY[fn])
        if fn in ("rand", "randn") and not kwargs:  # np.random.rand(d0, d1, ...)
            return _array(shape_of(tuple(args))) if args else UNKNOWN
        if fn == "default_rng":
            return GENERATOR
    if name in ("jax.device_count", "jax.local_device_count"):
        return DEVICES
    return UNKNOWN


# NumPy's and JAX's scalar types: `jnp.float32(5.0)` is an array of rank 0 (JAX maps it
# like any array, so "rank should be at least 1" when an in_axes leaf maps it).
_SCALAR_TYPES = frozenset(
    {
        "float16",
        "float32",
        "float64",
        "bfloat16",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "complex64",
        "complex128",
        "bool_",
    }
)


def _numpy_function(fn: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    if fn in _SCALAR_TYPES:
        if len(args) == 1 and not kwargs and type(args[0]) in (int, float, bool):
            return Array(())
        return UNKNOWN
    if fn in _BUILDERS:
        return _shaped(args, kwargs, _BUILDERS[fn])
    if fn in ("ones_like", "zeros_like", "empty_like", "full_like"):
        base = _argument(args, kwargs, 0, "a")
        override = kwargs.get("shape")
        if override is not None:
            return _array(shape_of(override))
        return base if isinstance(base, Array) and "shape" not in kwargs else UNKNOWN
    if fn == "arange":
        return _arange(args, kwargs)
    if fn == "linspace":
        # Array endpoints add their own axes (`linspace(zeros(3), 1, 5)` is (5, 3)): numbers only.
        ends = [_argument(args, kwargs, i, k) for i, k in ((0, "start"), (1, "stop"))]
        num = _argument(args, kwargs, 2, "num")
        num = 50 if num is _MISSING else num  # NumPy's and JAX's default
        if not all(type(e) in (int, float) for e in ends) or kwargs.keys() - {"num", "endpoint", "dtype"}:
            return UNKNOWN
        return _array(shape_of(num)) if type(num) is int else UNKNOWN
    if fn in ("eye",):
        n = _argument(args, kwargs, 0, "N")
        m = _argument(args, kwargs, 1, "M")
        m = n if m is _MISSING or m is None else m
        return _array(shape_of((n, m))) if size_of(n) is not UNKNOWN and size_of(m) is not UNKNOWN else UNKNOWN
    if fn == "identity":
        n = _argument(args, kwargs, 0, "n")
        return _array(shape_of((n, n))) if size_of(n) is not UNKNOWN else UNKNOWN
    if fn in ("asarray", "array") and args and _keeps_shape(args, kwargs):
        if isinstance(args[0], Array):
            return args[0]
        if isinstance(args[0], (list, tuple)):
            return _array(nested_shape(args[0]))
    if fn == "reshape" and len(args) >= 2:
        return reshape(args[0], args[1])
    if fn == "transpose" and args:
        return transpose(args[0], args[1] if len(args) > 1 else kwargs.get("axes"))
    if fn in ("stack", "concatenate") and args:
        axis = _argument(args, kwargs, 1, "axis")
        return join(fn, args[0], 0 if axis is _MISSING else axis)
    return UNKNOWN


def _keeps_shape(args: Sequence[Any], kwargs: dict[str, Any]) -> bool:
    """Whether `array(obj, ...)` has the shape of `obj`: no `ndmin` (NumPy's sixth
    positional parameter, JAX's fifth), which adds leading axes."""
    return "ndmin" not in kwargs and len(args) <= 4


def _arange(args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """`arange(stop)`, `arange(start, stop[, step])` with numbers the file states."""
    if kwargs.keys() - {"dtype"} or not 1 <= len(args) <= 3:
        return UNKNOWN
    numbers = list(args)
    if not all(type(n) in (int, float) for n in numbers):
        return UNKNOWN
    if len(numbers) == 1:
        start, stop, step = 0, numbers[0], 1
    else:
        start, stop = numbers[0], numbers[1]
        step = numbers[2] if len(numbers) == 3 else 1
    if step == 0 or not all(float(n).is_integer() for n in (start, stop, step)):
        return UNKNOWN  # fractional steps: the count depends on float rounding
    return Array((max(0, math.ceil((stop - start) / step)),))


def arithmetic(left: Any, right: Any) -> Any:
    """`left op right` for an elementwise operator (`+`, `*`, `/`, ...): NumPy broadcasting
    of arrays and numbers; UNKNOWN when a side is neither, or two stated sizes clash."""
    numbers = (int, float, bool)
    if not isinstance(left, Array) and not isinstance(right, Array):
        return UNKNOWN
    if not isinstance(left, Array):
        return right if type(left) in numbers else UNKNOWN
    if not isinstance(right, Array):
        return left if type(right) in numbers else UNKNOWN
    return broadcast(left.shape, right.shape)


def broadcast(a: Shape, b: Shape) -> Any:
    """The broadcast shape of `a` and `b`: sizes aligned on the right, 1 stretches. A size the
    file does not fix (None) next to n is n when the operation runs (it must be 1 or n)."""
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + a
    b = (1,) * (rank - len(b)) + b
    out: list[Size] = []
    for x, y in zip(a, b, strict=True):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        elif x is None or y is None:
            out.append(y if x is None else x)
        else:
            return UNKNOWN  # JAX raises at the operation itself
    return Array(tuple(out))


def nested_shape(value: Any) -> Shape | Any:
    """The shape of a nested list/tuple literal of numbers, when it is regular."""
    if type(value) in (int, float, complex, bool):
        return ()
    if not isinstance(value, (list, tuple)) or not value:
        return UNKNOWN if not isinstance(value, (list, tuple)) else (0,)
    inner = [nested_shape(v) for v in value]
    if any(s is UNKNOWN for s in inner) or len(set(inner)) != 1:
        return UNKNOWN
    return (len(value), *inner[0])


# ------------------------------------------------------------ array methods


def method(base: Any, name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """`base.name(*args, **kwargs)` for an Array or a numpy Generator."""
    if base is GENERATOR:
        rule = _RANDOM_NUMPY.get(name)
        return _shaped(args, kwargs, rule) if rule is not None else UNKNOWN
    if not isinstance(base, Array):
        return UNKNOWN
    if name == "reshape" and not kwargs and args:
        return reshape(base, args[0] if len(args) == 1 else tuple(args))
    if name == "transpose" and not kwargs:
        return transpose(base, (args[0] if len(args) == 1 else tuple(args)) if args else None)
    if name == "astype" or name == "copy" or name == "block_until_ready":
        return base
    if name in ("ravel", "flatten") and not args and not kwargs:
        return Array((_prod(base.shape),))
    return UNKNOWN


def attribute(base: Any, name: str) -> Any:
    """`base.T`, `base.shape`, `base.ndim` of an Array."""
    if not isinstance(base, Array):
        return UNKNOWN
    if name in ("T", "mT") and (name == "T" or base.rank >= 2):
        shape = base.shape[::-1] if name == "T" else (*base.shape[:-2], base.shape[-1], base.shape[-2])
        return Array(shape)
    if name == "shape":
        return tuple(UNKNOWN if s is None else s for s in base.shape)
    if name == "ndim":
        return base.rank
    return UNKNOWN


def reshape(base: Any, new: Any) -> Any:
    """NumPy's reshape: at most one -1, inferred from the total size."""
    if not isinstance(base, Array):
        return UNKNOWN
    entries = (new,) if type(new) is int else new
    if not isinstance(entries, (tuple, list)) or not all(type(e) is int and e >= -1 for e in entries):
        return UNKNOWN
    if list(entries).count(-1) > 1:
        return UNKNOWN
    total = _prod(base.shape)
    known = math.prod(e for e in entries if e != -1)
    if -1 in entries:
        if total is None or known == 0 or total % known:
            return UNKNOWN
        return Array(tuple(total // known if e == -1 else e for e in entries))
    if total is not None and total != known:
        return UNKNOWN  # JAX raises at the reshape itself
    return Array(tuple(entries))


def transpose(base: Any, axes: Any) -> Any:
    if not isinstance(base, Array):
        return UNKNOWN
    if axes is None:
        return Array(base.shape[::-1])
    if not isinstance(axes, (tuple, list)) or sorted(
        a % base.rank if type(a) is int and base.rank else -1 for a in axes
    ) != list(range(base.rank)):
        return UNKNOWN
    return Array(tuple(base.shape[a] for a in axes))


def join(fn: str, parts: Any, axis: Any) -> Any:
    """`stack` (a new axis) or `concatenate` (along an axis) of arrays of known shapes."""
    if not isinstance(parts, (tuple, list)) or not parts or type(axis) is not int:
        return UNKNOWN
    if not all(isinstance(p, Array) for p in parts) or len({p.rank for p in parts}) != 1:
        return UNKNOWN
    rank = parts[0].rank
    shapes = [p.shape for p in parts]
    if fn == "stack":
        if not -(rank + 1) <= axis <= rank:
            return UNKNOWN
        rest = _agree(shapes, range(rank))
        if rest is UNKNOWN:
            return UNKNOWN
        position = axis % (rank + 1)
        return Array((*rest[:position], len(parts), *rest[position:]))
    if rank == 0 or not -rank <= axis < rank:
        return UNKNOWN
    position = axis % rank
    others = [i for i in range(rank) if i != position]
    rest = _agree(shapes, others)
    if rest is UNKNOWN:
        return UNKNOWN
    sizes = [s[position] for s in shapes]
    total = None if any(s is None for s in sizes) else sum(s for s in sizes if s is not None)
    return Array((*rest[:position], total, *rest[position:]))


def _agree(shapes: list[Shape], dims: Sequence[int] | range) -> Any:
    """The sizes at `dims`, which every shape must share (UNKNOWN when two known ones differ)."""
    out: list[Size] = []
    for d in dims:
        known = {s[d] for s in shapes if s[d] is not None}
        if len(known) > 1:
            return UNKNOWN
        out.append(known.pop() if known else None)
    return tuple(out)

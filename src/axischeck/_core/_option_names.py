"""Keywords users write for a transform's option, and the option each means: names from
other transforms, from older JAX, or the singular. JAX-free: the drop-ins' refusal of a
keyword they do not take and lint's AX023 read the same table, and say the same of a map
given an option that keeps arguments static."""

from __future__ import annotations

from ._text import and_list

MEANT: dict[str, str] = {
    "axis": "in_axes",
    "axes": "in_axes",
    "in_axis": "in_axes",
    "out_axis": "out_axes",
    "in_dims": "in_axes",  # torch.func.vmap's names
    "out_dims": "out_axes",
    "in_spec": "in_specs",
    "out_spec": "out_specs",
    "check_rep": "check_vma",  # its name before JAX 0.7
    "static_argnums": "static_broadcasted_argnums",
}

STATIC_OPTIONS = frozenset({"static_argnums", "static_argnames", "static_broadcasted_argnums"})
"""The options of jit and pmap that keep arguments static, which a map over examples lacks."""


def unmapped_instead(name: str, static: object) -> str:
    """What a map without static arguments (vmap, smap) takes instead of `static`: an
    in_axes entry None passes an argument whole to every example (and a Python constant
    the function needs as such is bound beforehand)."""
    given = list(static) if isinstance(static, tuple | list) else [static]
    which = and_list([f"argument {g}" if type(g) is int else repr(g) for g in given]) if given else "it"
    return (
        f"{name} keeps no argument static: give {which} the in_axes entry None, which passes it whole to"
        " every example (a value the function needs as a Python constant: bind it first, functools.partial)"
    )

"""Keywords users write for a transform's option, and the option each means: names from
other transforms, from older JAX, or the singular. JAX-free: the drop-ins' refusal of a
keyword they do not take and lint's AX023 read the same table."""

from __future__ import annotations

MEANT: dict[str, str] = {
    "axis": "in_axes",
    "axes": "in_axes",
    "in_axis": "in_axes",
    "out_axis": "out_axes",
    "in_spec": "in_specs",
    "out_spec": "out_specs",
    "check_rep": "check_vma",  # its name before JAX 0.7
    "static_argnums": "static_broadcasted_argnums",
}

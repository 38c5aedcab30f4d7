"""The finding codes (stable: never renumbered, never reused) and the finding value."""

from __future__ import annotations

from dataclasses import dataclass, field

from ._edits import Edit


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    name: str  # kebab-case, for SARIF's rule name
    title: str  # one line
    level: str = "error"  # SARIF level: "error" (JAX raises) or "warning" (JAX runs, probably wrongly)


RULES: dict[str, Rule] = {
    r.code: r
    for r in (
        Rule("AX001", "in-axes-length", "in_axes has a different number of entries than the positional arguments"),
        Rule("AX002", "axes-value", "in_axes / out_axes holds a value JAX refuses (a str, float or bool, ...)"),
        Rule("AX003", "in-axes-keyword", "in_axes gives an axis to an argument passed by keyword"),
        Rule("AX004", "out-axes-structure", "out_axes / out_specs does not match the returned tuple"),
        Rule("AX005", "unbound-axis-name", "a collective names an axis that no enclosing transform binds"),
        Rule(
            "AX006",
            "shadowed-axis-name",
            "an axis_name is bound twice in one nest (the inner one hides the outer)",
            "warning",
        ),
        Rule("AX007", "signature-inputs", "signature= declares inputs the function does not have"),
        Rule("AX008", "signature-annotation-rank", "signature= and the function's annotations disagree on a rank"),
        Rule("AX009", "axis-out-of-range", "an in_axes / out_axes entry is out of range for the declared rank"),
        Rule("AX010", "in-specs-length", "shard_map in_specs has a different number of entries than the arguments"),
        Rule("AX011", "spec-too-long", "a PartitionSpec has more entries than the declared rank"),
        Rule("AX012", "bad-signature", "signature= is not a signature axischeck can read"),
        Rule("AX013", "batch-size-mismatch", "the mapped axes of the arguments have different sizes"),
        Rule("AX014", "axis-beyond-rank", "in_axes asks for an axis the argument's shape does not have"),
        Rule("AX015", "nothing-mapped", "every in_axes entry is None, with no axis_size and no keyword argument"),
        Rule("AX016", "mapped-python-scalar", "in_axes maps a Python scalar, which has no axis"),
        Rule("AX017", "in-axes-not-prefix", "in_axes is not a tree prefix of the arguments (a tuple for an array)"),
        Rule("AX018", "mapped-output-unmapped", "out_axes is None for an output that varies along the mapped axis"),
        Rule(
            "AX019",
            "psum-of-psum",
            "a psum of a value already summed over the same axis (multiplied by the axis size)",
            "warning",
        ),
        Rule(
            "AX020",
            "uneven-shards",
            "a shard_map argument's dimension is not a multiple of the mesh axes it is split over",
        ),
        Rule("AX021", "scan-carry-varies", "a scan carry inside shard_map starts the same on every device and varies"),
        Rule(
            "AX022",
            "shared-random-key",
            "a mapped function draws from a random key that is the same for every example or device",
            "warning",
        ),
        Rule("AX023", "unknown-option", "a transform is given a keyword it does not take (a misspelled option)"),
        Rule(
            "AX024", "mapped-iterator", "an iterator (zip, map, a generator) is passed where in_axes maps an argument"
        ),
        Rule(
            "AX025",
            "size-one-axis-replication",
            "out_specs leaves out a mesh axis of size 1 that in_specs splits the output's source over",
        ),
        Rule("AX026", "mapped-function", "a function is passed where in_axes maps an argument"),
        Rule("AX027", "mapped-self", "in_axes maps the self of a method of a class that is no pytree"),
        Rule(
            "AX028",
            "copies-stacked",
            "a shard_map or smap splits no argument but splits its output: identical copies stacked",
        ),
        Rule(
            "AX029",
            "layout-moved",
            "a mapped result is combined with an argument it mapped along another axis than out_axes stacks it on",
        ),
    )
}


@dataclass(frozen=True, slots=True)
class Location:
    """Another place a finding is about (the argument that conflicts), with what it holds.
    Lines count from 1, columns are characters from 0."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str


@dataclass(frozen=True, slots=True)
class Finding:
    """One reported mistake. `line` and `column` count from 1; in a notebook, `cell` is the
    cell's number among all its cells (from 1) and `line` counts in that cell."""

    path: str
    line: int
    column: int
    code: str
    message: str
    fix: str | None = None
    cell: int | None = None
    # For editors: where the finding's expression ends (end_column counts characters from 0),
    # the places it is about, and its fix as an edit where lint is sure of one (`_edits`).
    end_line: int | None = field(default=None, compare=False)
    end_column: int | None = field(default=None, compare=False)
    related: tuple[Location, ...] = field(default=(), compare=False)
    edit: Edit | None = field(default=None, compare=False)

    def where(self) -> str:
        """`path:line:col`, or `path:cell 3:line:col` in a notebook."""
        cell = f"cell {self.cell}:" if self.cell is not None else ""
        return f"{self.path}:{cell}{self.line}:{self.column}"

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "path": self.path,
            **({"cell": self.cell} if self.cell is not None else {}),
            "line": self.line,
            "column": self.column,
            "code": self.code,
            "message": self.message,
        }
        if self.fix is not None:
            out["fix"] = self.fix
        return out

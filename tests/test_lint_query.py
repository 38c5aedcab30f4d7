"""Lint's query API for editors (`_lint/_query`) and its fixes as edits (`_lint/_edits`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from axischeck._lint import lint_files
from axischeck._lint._edits import apply
from axischeck._lint._query import call_hints, facts_at, findings_for

SIGNED = """\
import axischeck as ax
import jax.numpy as jnp


def op(x, y, z):
    return jnp.einsum("ab,bc->ac", x, y) + z


batched = ax.vmap(op, in_axes=(0, 1, 0), signature="(a,b),(b,c),(a,c)->(a,c)")
out = batched(jnp.ones((16, 8, 4)), jnp.ones((4, 16, 2)), jnp.ones((16, 8, 2)))
plain = ax.vmap(op, in_axes=(0, 1, 0))
what = plain(jnp.ones((16, 8, 4)), load(), jnp.ones((16, 8, 2)))
"""


def test_a_calls_facts_are_the_stated_shapes_and_unknown_elsewhere() -> None:
    facts = facts_at("m.py", SIGNED, 10, 8)
    assert facts is not None and facts.role == "call" and facts.kind == "vmap"
    assert [(a.name, a.batched, a.axis, a.per_example, a.declared) for a in facts.arguments] == [
        ("x", "(16, 8, 4)", "0", "(8, 4)", "(a, b)"),
        ("y", "(4, 16, 2)", "1", "(4, 2)", "(b, c)"),
        ("z", "(16, 8, 2)", "0", "(8, 2)", "(a, c)"),
    ]
    assert (facts.result_per_example, facts.result_batched, facts.batch_size) == ("(8, 2)", "(16, 8, 2)", "16")
    unread = facts_at("m.py", SIGNED, 12, 8)
    assert unread is not None
    assert [(a.name, a.batched, a.per_example, a.declared) for a in unread.arguments] == [
        ("x", "(16, 8, 4)", "(8, 4)", "unknown"),
        ("y", "unknown", "unknown", "unknown"),  # load(): the file does not say
        ("z", "(16, 8, 2)", "(8, 2)", "unknown"),
    ]
    assert (unread.result_per_example, unread.result_batched, unread.batch_size) == ("unknown", "unknown", "16")


def test_the_transform_and_the_function_it_returns() -> None:
    made = facts_at("m.py", SIGNED, 9, 14)
    named = facts_at("m.py", SIGNED, 9, 2)
    assert made is not None and made.role == "transform" and made.transform == "vmap(op, in_axes=(0, 1, 0))"
    assert named is not None and named.role == "function" and named.arguments == made.arguments
    assert [a.batched for a in made.arguments] == ["unknown"] * 3
    assert facts_at("m.py", SIGNED, 6, 10) is None  # inside op
    assert "| y | unknown | 1 | unknown | (b, c) |" in made.markdown()


def test_a_decorated_def_and_annotations() -> None:
    src = (
        "from typing import Annotated\nimport jax\nimport jax.numpy as jnp\n\n\n@jax.vmap\n"
        "def dense(x: Annotated[jax.Array, 'i'], w: Annotated[jax.Array, 'o i']) -> Annotated[jax.Array, 'o']:\n"
        "    return w @ x\n\n\nd = dense(jnp.ones((5, 3)), jnp.ones((5, 2, 3)))\n"
    )
    name = facts_at("d.py", src, 7, 5)
    assert name is not None and name.role == "function"
    call = facts_at("d.py", src, 11, 5)
    assert call is not None and (call.result_per_example, call.result_batched) == ("(2,)", "(5, 2)")
    assert [(h.line, h.text) for h in call_hints("d.py", src)] == [(11, "-> (5, 2)")]


def test_disagreeing_arguments_give_no_result_shape() -> None:
    src = SIGNED.replace("jnp.ones((4, 16, 2))", "jnp.ones((5, 16, 2))")
    facts = facts_at("m.py", src, 10, 8)
    assert facts is not None and facts.result_per_example == "unknown"
    assert call_hints("m.py", src) == []


def test_shard_map_blocks_from_a_literal_mesh() -> None:
    src = (
        "import jax\nimport jax.numpy as jnp\nfrom jax.sharding import PartitionSpec as P\n\n"
        "mesh = jax.make_mesh((4, 2), ('data', 'model'))\n"
        "f = jax.shard_map(lambda x, w: x * w, mesh=mesh, in_specs=(P('data', 'model'), P('model')),"
        " out_specs=P('data', 'model'))\n"
        "y = f(jnp.ones((16, 6)), jnp.ones((6,)))\n"
    )
    facts = facts_at("s.py", src, 7, 5)
    assert facts is not None and facts.kind == "shard_map"
    assert [(a.name, a.axis, a.batched, a.per_example) for a in facts.arguments] == [
        ("x", "P('data', 'model')", "(16, 6)", "(4, 3)"),
        ("w", "P('model')", "(6,)", "(3,)"),
    ]
    assert "global shape" in facts.markdown() and "per-device" in facts.markdown()


@pytest.mark.parametrize(
    ("source", "fixed"),
    [
        ("import jax\np = jax.pmap(lambda x, y: x, in_axes=[0, 1])\n", "in_axes=(0, 1))"),
        ("import jax\nf = jax.vmap(lambda x, y: x, in_axes=(0, '1'))\n", "in_axes=(0, 1))"),
        (
            "import jax\nfrom jax import lax\n\n\ndef t(x):\n    return lax.psum(x, 'b')\n\n\n"
            "s = jax.vmap(t)(jax.numpy.ones((4, 3)))\n",
            "jax.vmap(t, axis_name='b')",
        ),
        (
            "import jax\nfrom jax import lax\n\n\ndef t(x):\n    return lax.psum(x, 'b')\n\n\n"
            "s = jax.vmap(\n    t,\n)(jax.numpy.ones((4, 3)))\n",
            "    t, axis_name='b',\n)",
        ),
    ],
)
def test_a_sure_fix_is_an_edit_that_clears_the_finding(tmp_path: Path, source: str, fixed: str) -> None:
    (finding,) = findings_for(str(tmp_path / "f.py"), source)
    assert finding.edit is not None
    after = apply(source, finding.edit)
    assert fixed in after
    assert findings_for(str(tmp_path / "f.py"), after) == []


def test_a_fix_lint_is_not_sure_where_to_put_has_no_edit(tmp_path: Path) -> None:
    source = "import jax\nf = jax.vmap(lambda x, y: x, in_axes=(0, None, 1))\n"  # AX001, no fix
    (finding,) = findings_for(str(tmp_path / "f.py"), source)
    assert finding.code == "AX001" and finding.fix is None and finding.edit is None
    # The fix of a Markdown cell is text only: the file is not the module lint read.
    doc = tmp_path / "d.md"
    doc.write_text("```python\nimport jax\np = jax.pmap(lambda x, y: x, in_axes=[0, 1])\n```\n")
    (cell,) = lint_files([doc])[0]
    assert cell.fix == "in_axes=(0, 1)" and cell.edit is None


def test_findings_for_reads_the_config_and_the_buffer(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.axischeck.lint]\ndisable = ["AX002"]\nexclude = ["gen"]\n')
    path = tmp_path / "f.py"
    path.write_text("")  # the file on disk is empty: the editor's text is what counts
    text = "import jax\np = jax.pmap(lambda x, y: x, in_axes=[0, 1])\nf = jax.vmap(lambda x: x, in_axes=(0, 1))\n"
    assert [f.code for f in findings_for(str(path), text)] == ["AX001"]
    (tmp_path / "gen").mkdir()
    assert findings_for(str(tmp_path / "gen" / "f.py"), text) == []

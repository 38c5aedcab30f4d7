"""Jupyter shows predictions, explanations and errors as HTML; their text is unchanged.

The first tests render in this process. The slow ones run a real notebook with nbclient
and ipykernel (scripts/notebook_picture.py, which also makes the picture in
docs/notebooks.md) and render its HTML in headless Chromium, reading the screenshot's
pixels: the mapped axes are drawn in their colour, the conflicting ones in theirs.
"""

from __future__ import annotations

import importlib.util
import pickle
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import jax.numpy as jnp
import pytest
from jax.sharding import PartitionSpec as P

import axischeck as ax
from axischeck._core._html import CONFLICT, MAPPED, SPLIT, Explanation

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "notebook_picture.py"


def einsum(x: jnp.ndarray, y: jnp.ndarray, z: jnp.ndarray) -> jnp.ndarray:
    return jnp.einsum("ab,bc->ac", x, y) + z


BATCHED = ax.vmap(einsum, in_axes=(0, 1, 0), signature="(a,b),(b,c),(a,c)->(a,c)")
GOOD = ((16, 8, 4), (4, 16, 2), (16, 8, 2))
BAD = ((16, 8, 4), (5, 16, 2), (16, 8, 2))


def _boxes(page: str, color: str) -> int:
    """How many boxes (SVG rects) of `color` the page draws (its text is coloured too)."""
    return len(re.findall(rf"<rect [^>]*fill='{color}'", page))


def test_a_prediction_is_drawn_and_its_text_is_unchanged() -> None:
    pred = BATCHED.predict(*GOOD)
    page = pred._repr_html_()
    assert str(pred).splitlines()[0] == "batch size B=16"  # the text form, as before
    assert page.count("<svg") == 3 and _boxes(page, MAPPED) == 3  # one mapped axis per argument
    assert "<td>(4, 16, 2)</td><td>1</td><td>(4, 2)</td>" in page  # y's row: the text table's cells
    assert "ax-conflict" not in page.split("</style>")[1]


def test_an_explanation_is_its_text_and_draws_the_conflict() -> None:
    text = BATCHED.explain(*BAD)
    try:
        BATCHED.predict(*BAD)
    except ax.AxisCheckError as err:
        expected = f"{type(err).__name__}: {err}"
    assert isinstance(text, str) and isinstance(text, Explanation)
    assert text == expected and str(text) == expected and hash(text) == hash(expected)
    page = text._repr_html_()
    body = page.split("</style>")[1]
    # The conflicting pair: axis 2 of x and axis 0 of y, and y's row of the table.
    assert _boxes(body, CONFLICT) == 2
    assert "<tr class='ax-conflict'><td>y</td>" in body
    assert "dimension &#x27;b&#x27; disagrees: 4 from x, 5 from y" in body
    again = pickle.loads(pickle.dumps(text))
    assert again == text and again._repr_html_() == page


def test_a_passing_explanation_has_the_prediction_drawn() -> None:
    text = BATCHED.explain(*GOOD)
    assert text.startswith("vmap(einsum, in_axes=(0, 1, 0), out_axes=0) -> (16, 8, 2)\nbatch size B=16")
    assert text._repr_html_().count("<svg") == 3


def test_an_error_is_drawn_from_its_facts() -> None:
    with pytest.raises(ax.AxisCheckError) as caught:
        ax.vmap(jnp.add).predict((16, 3), (15, 3))
    err = caught.value
    assert err.steps and err.places  # the facts the drawing comes from
    body = err._repr_html_().split("</style>")[1]
    assert _boxes(body, CONFLICT) == 2 and "ArgumentError: vmap(add" in body
    assert body.count("<tr class='ax-conflict'>") == 2  # the rows of the two places
    assert str(err).startswith("vmap(add, in_axes=0, out_axes=0): the mapped axes disagree on the batch size")


def test_shard_map_draws_the_mesh_one_block_and_the_splits() -> None:
    layer = ax.shard_map(
        lambda x, w: x * w[None, :],
        mesh={"data": 4, "model": 2},
        in_specs=(P("data", "model"), P("model")),
        out_specs=P("data", "model"),
        check_vma=False,
    )
    page = layer.predict((1024, 512), (512,))._repr_html_()
    assert "class='ax-mesh'" in page and _boxes(page, MAPPED) == 1  # one device's cell
    assert _boxes(page, SPLIT) == 3  # x's two split axes, w's one
    assert "÷ &#x27;data&#x27; (4)" in page and "one device&#x27;s block: (256, 256)" in page


@pytest.mark.devices(8)
def test_pmap_draws_its_devices() -> None:
    page = ax.pmap(lambda x: x * 2).predict((8, 3))._repr_html_()
    assert "mesh &#x27;devices&#x27;: 8" in page and "split over 8 devices" in page


def test_an_error_made_without_a_derivation_shows_its_text() -> None:
    with pytest.raises(ax.SpecError) as caught:
        ax.vmap(jnp.sin, in_axes="0")
    assert caught.value._repr_html_().startswith("<pre")


# ----------------------------------------------------------------- a real kernel


def _png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGB(A) bytes of an 8-bit, non-interlaced PNG (Chromium's)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, header = 8, [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and color in (2, 6) and interlace == 0
    step = 4 if color == 6 else 3
    raw = zlib.decompress(b"".join(chunks))
    rows, previous, stride = [], bytearray(width * step), width * step
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - step] if i >= step else 0
            up = previous[i]
            corner = previous[i - step] if i >= step else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(bytes(line) if step == 3 else bytes(b for k, b in enumerate(line) if k % 4 != 3))
        previous = line
    return width, height, rows


def _count(rows: list[bytes], color: str) -> int:
    want = bytes.fromhex(color.lstrip("#"))
    return sum(
        1 for row in rows for k in range(0, len(row), 3) if all(abs(row[k + c] - want[c]) <= 6 for c in range(3))
    )


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example notebook run in a real kernel: the executed notebook, its page and picture."""
    pytest.importorskip("nbclient", reason="needs nbclient and ipykernel (the dev extra installs them)")
    folder = tmp_path_factory.mktemp("notebook")
    args = [
        "--notebook",
        str(folder / "run.ipynb"),
        "--html",
        str(folder / "page.html"),
        "--png",
        str(folder / "p.png"),
    ]
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return folder


@pytest.mark.slow
def test_a_real_notebook_shows_html_and_the_same_text(executed: Path) -> None:
    import nbformat

    nb = nbformat.read(str(executed / "run.ipynb"), as_version=4)
    shown = [[o for o in cell.outputs if o.output_type == "execute_result"][-1].data for cell in nb.cells]
    assert all("text/html" in data and "text/plain" in data for data in shown)
    prediction, explanation, shard, error = shown
    assert prediction["text/plain"] == repr(BATCHED.predict(*GOOD)).replace("einsum", "complex_operation")
    assert prediction["text/html"].count("<svg") == 3 and _boxes(prediction["text/html"], MAPPED) == 3
    # The explanation's text/plain is the str's repr, as Jupyter always showed it.
    assert explanation["text/plain"].startswith('"ArgumentError: vmap(complex_operation, in_axes=(0, 1, 0)')
    assert "<tr class='ax-conflict'><td>y</td>" in explanation["text/html"]
    assert "class='ax-mesh'" in shard["text/html"]
    assert error["text/plain"].startswith("axischeck.ArgumentError('vmap(add, in_axes=0, out_axes=0): the mapped axes")
    assert _boxes(error["text/html"], CONFLICT) == 2


@pytest.mark.slow
def test_chromium_draws_the_marked_axes(executed: Path) -> None:
    """The page as a browser shows it: the mapped axes' blue, the conflicts' red and the
    mesh splits' violet are on the screen, in areas of the size the drawings give them."""
    spec = importlib.util.spec_from_file_location("notebook_picture", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.chromium() is not None, "no chromium: apt-get install chromium (as .ci/run does)"
    script.screenshot(executed / "page.html", executed / "p.png")
    width, height, rows = _png_pixels(executed / "p.png")
    assert (width, height) == (1000, 1320)
    mapped, conflict, split = _count(rows, MAPPED), _count(rows, CONFLICT), _count(rows, SPLIT)
    # Each box is at least 34 x 26 pixels: 3 + 2 mapped boxes (more in the mesh's cells and
    # the error's), 2 + 2 conflicting ones, 3 split ones.
    assert mapped > 5 * 30 * 20, mapped
    assert conflict > 4 * 30 * 20, conflict
    assert split > 3 * 30 * 20, split
    # The first drawing's mapped box (x's axis 0) is near the top left, where the page puts it.
    top = [y for y, row in enumerate(rows[:200]) if _count([row], MAPPED) >= 30]
    assert top and 50 < top[0] < 120, top[:3]

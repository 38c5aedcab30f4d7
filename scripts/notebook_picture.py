"""Runs a small notebook in a real Jupyter kernel and keeps what Jupyter would show.

    python scripts/notebook_picture.py --png docs/notebook.png     # the picture in docs/notebooks.md
    python scripts/notebook_picture.py --notebook out.ipynb --html out.html

The notebook shows axischeck's values as a cell's result: a `Prediction`, an explanation
of a failing call (the einsum example), a shard_map's prediction and a caught
`AxisCheckError`. It is executed with nbclient and ipykernel (the dev extra installs
both); `--notebook` keeps the executed notebook, `--html` a page of its HTML outputs (as
Jupyter renders them, one section per cell), `--png` a screenshot of that page taken by
headless Chromium (Debian's `chromium`; CI installs it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CELLS = [
    """\
import jax.numpy as jnp
import axischeck as ax
from jax.sharding import PartitionSpec as P

def complex_operation(x, y, z):
    return jnp.einsum("ab,bc->ac", x, y) + z

batched = ax.vmap(complex_operation, in_axes=(0, 1, 0), signature="(a,b),(b,c),(a,c)->(a,c)")
batched.predict((16, 8, 4), (4, 16, 2), (16, 8, 2))""",
    """\
batched.explain(jnp.ones((16, 8, 4)), jnp.ones((5, 16, 2)), jnp.ones((16, 8, 2)))""",
    """\
layer = ax.shard_map(lambda x, w: x * w[None, :], mesh={"data": 4, "model": 2},
                     in_specs=(P("data", "model"), P("model")), out_specs=P("data", "model"), check_vma=False)
layer.predict((1024, 512), (512,))""",
    """\
try:
    ax.vmap(jnp.add).predict((16, 3), (15, 3))
except ax.AxisCheckError as err:
    caught = err
caught""",
]

TITLES = [
    "a prediction",
    "an explanation of a failing call",
    "a shard_map prediction",
    "an AxisCheckError as a cell's value",
]


def notebook() -> Any:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def execute(timeout: int = 600) -> Any:
    """The notebook, run top to bottom in a fresh kernel (this Python's ipykernel)."""
    from nbclient import NotebookClient

    nb = notebook()
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as folder:
        NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": folder}}).execute(
            env=env
        )
    return nb


def outputs(nb: Any) -> list[dict[str, str]]:
    """Each code cell's shown result: its `data` by MIME type (text/plain, text/html)."""
    found = []
    for cell in nb.cells:
        shown = [o for o in cell.get("outputs", []) if o.get("output_type") in ("execute_result", "display_data")]
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if errors:
            raise RuntimeError(f"a cell failed: {errors[0].get('ename')}: {errors[0].get('evalue')}")
        found.append(dict(shown[-1]["data"]) if shown else {})
    return found


def page(nb: Any) -> str:
    """The cells' HTML outputs as one page, each under its title."""
    sections = []
    for title, data in zip(TITLES, outputs(nb), strict=True):
        sections.append(
            f"<section style='margin:0 0 18px'><div style='font:12px system-ui;color:#6b7280;margin:0 0 4px'>"
            f"Out: {title}</div>{data.get('text/html', '')}</section>"
        )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>axischeck in Jupyter</title></head>"
        "<body style='margin:16px;background:#ffffff'>" + "".join(sections) + "</body></html>"
    )


def chromium() -> str | None:
    """Debian's Chromium (`apt-get install chromium`), or another on PATH."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found is not None:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def screenshot(html_path: Path, png: Path, width: int = 1000, height: int = 1320) -> None:
    """A headless Chromium screenshot of the page (no network, no GPU, a throwaway profile)."""
    browser = chromium()
    if browser is None:
        raise RuntimeError("no chromium found: apt-get install chromium (.ci/run installs it)")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--no-first-run",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                f"--screenshot={png.resolve()}",
                html_path.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    if not png.is_file():
        raise RuntimeError("chromium wrote no screenshot")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebook", type=Path, help="keep the executed notebook here")
    parser.add_argument("--html", type=Path, help="keep the page of HTML outputs here")
    parser.add_argument("--png", type=Path, help="a screenshot of that page")
    args = parser.parse_args(argv)
    nb = execute()
    if args.notebook is not None:
        import nbformat

        nbformat.write(nb, str(args.notebook))
    text = page(nb)
    with tempfile.TemporaryDirectory() as folder:
        html_path = args.html or Path(folder, "notebook.html")
        html_path.write_text(text, encoding="utf-8")
        if args.png is not None:
            screenshot(html_path, args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())

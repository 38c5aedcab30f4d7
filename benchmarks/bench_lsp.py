"""`axischeck lsp`: the time from an edit to fresh diagnostics, and the server's memory.

    python benchmarks/bench_lsp.py                  # a 2,000-line file, 1,000 edits
    python benchmarks/bench_lsp.py --lines 300 --edits 20 --json out.json   # quick

Starts `python -m axischeck lsp` as an editor does (stdio, default settings), opens a
generated file dense with transforms (a transform application or a mapped call every
three lines), then sends edits one at a time, each an incremental change of one line that
adds or removes a finding, and waits for the diagnostics of that version. Edits come
`--pause` seconds after the previous diagnostics (default 0.15 s, a fast typist's pace); a
burst of changes closer together than the server's 50 ms debounce is linted once, at its
end (`--burst` measures that: each edit sent right after the last diagnostics). The client
is a few lines of JSON-RPC here, so its own cost is not in the figures. It prints the
change -> diagnostics time (median and 90th percentile over every edit) and the server's
resident memory after the first 100 edits and after all of them (targets: under 150 ms; no
growth beyond noise).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from queue import Empty, Queue
from typing import Any

HEADER = """\
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax
"""

BLOCK = """\


def loss_{i}(w, x, y):
    return jnp.sum(w * x) + y


def norm_{i}(x):
    return x / lax.psum(x, "batch")


@partial(jax.vmap, in_axes=(0, None))
def rows_{i}(x, w):
    return x @ w


batched_{i} = jax.vmap(loss_{i}, in_axes=(None, 0, 0))
out_{i} = batched_{i}(jnp.ones((4,)), jnp.ones((16, 4)), jnp.ones((16,)))
normed_{i} = jax.vmap(norm_{i}, axis_name="batch")(jnp.ones((8, 3)))
r_{i} = rows_{i}(jnp.ones((10, 4)), jnp.ones((4, 2)))
"""


def source(lines: int) -> str:
    parts = [HEADER]
    i = 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(BLOCK.format(i=i))
        i += 1
    return "".join(parts)


class Client:
    """A minimal LSP client over a subprocess's pipes: enough to measure, nothing more."""

    def __init__(self, command: list[str]) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.messages: Queue[dict[str, Any]] = Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            self.messages.put(json.loads(out.read(length)))

    def send(self, method: str, params: Any, request: bool = False) -> int | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        ident = None
        if request:
            self.next_id += 1
            ident = message["id"] = self.next_id
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return ident

    def wait(self, match: Any, timeout: float = 60) -> dict[str, Any]:
        end = time.perf_counter() + timeout
        while True:
            try:
                message = self.messages.get(timeout=max(0.0, end - time.perf_counter()))
            except Empty:
                raise TimeoutError("the server did not answer") from None
            if match(message):
                return message

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        ident = self.send("shutdown", None, request=True)
        self.wait(lambda m: m.get("id") == ident, 30)
        self.send("exit", None)
        self.proc.wait(timeout=30)


def run(lines: int, edits: int, pause: float) -> dict[str, Any]:
    text = source(lines)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "dense.py")
        path.write_text(text)
        uri = path.as_uri()
        client = Client([sys.executable, "-m", "axischeck", "lsp"])
        try:
            ident = client.send("initialize", {"processId": os.getpid(), "capabilities": {}}, request=True)
            client.wait(lambda m: m.get("id") == ident)
            client.send("initialized", {})
            item = {"uri": uri, "languageId": "python", "version": 0, "text": text}
            client.send("textDocument/didOpen", {"textDocument": item})

            def diagnostics(version: int) -> dict[str, Any]:
                return client.wait(
                    lambda m: (
                        m.get("method") == "textDocument/publishDiagnostics" and m["params"].get("version") == version
                    )
                )

            opened = diagnostics(0)["params"]["diagnostics"]
            target = text.splitlines().index("out_0 = batched_0(jnp.ones((4,)), jnp.ones((16, 4)), jnp.ones((16,)))")
            good = text.splitlines()[target]
            bad = good.replace("jnp.ones((16,))", "jnp.ones((15,))")
            times, found, rss = [], [], {}
            for version in range(1, edits + 1):
                old, new = (good, bad) if version % 2 else (bad, good)
                change = {
                    "range": {
                        "start": {"line": target, "character": 0},
                        "end": {"line": target, "character": len(old)},
                    },
                    "text": new,
                }
                time.sleep(pause)
                start = time.perf_counter()
                client.send(
                    "textDocument/didChange",
                    {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
                )
                found.append(len(diagnostics(version)["params"]["diagnostics"]))
                times.append(time.perf_counter() - start)
                if version == min(100, edits) or version % 250 == 0 or version == edits:
                    rss[version] = round(client.rss_mb(), 1)
        finally:
            client.close()
    ms = sorted(1000 * t for t in times)
    return {
        "lines": text.count("\n"),
        "edits": edits,
        "pause_s": pause,
        "findings_on_open": len(opened),
        "findings_alternate": sorted(set(found)),
        "change_to_diagnostics_ms_median": statistics.median(ms),
        "change_to_diagnostics_ms_p90": ms[int(0.9 * (len(ms) - 1))],
        "rss_mb_after_100": rss[min(100, edits)],
        "rss_mb_after_all": rss[edits],
        "rss_mb_by_edit": rss,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--edits", type=int, default=1000)
    parser.add_argument("--pause", type=float, default=0.15, help="seconds between diagnostics and the next edit")
    parser.add_argument("--burst", action="store_true", help="no pause: every edit within the debounce")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    result = run(args.lines, args.edits, 0.0 if args.burst else args.pause)
    print(
        f"axischeck lsp, {result['lines']} lines, {result['edits']} edits {result['pause_s']} s apart:"
        " change -> diagnostics"
        f" median {result['change_to_diagnostics_ms_median']:.0f} ms, p90 {result['change_to_diagnostics_ms_p90']:.0f}"
        f" ms (target < 150 ms); server RSS {result['rss_mb_after_100']:.1f} MB after 100 edits,"
        f" {result['rss_mb_after_all']:.1f} MB after {result['edits']} (by edit: {result['rss_mb_by_edit']})"
    )
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

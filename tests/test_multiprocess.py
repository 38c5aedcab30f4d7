"""A job of two JAX processes, as on a multi-host TPU or GPU pod, run on this machine.

`multiprocess_job.py` runs in two subprocesses that join one job over the loopback (4 CPU
devices each, 8 in the job, collectives over gloo). Each runs the same scenarios with
JAX's transforms and axischeck's and records what both did; the oracle is JAX on the same
process. What must hold: values and shapes agree (pmap with psum, axis_index and
all_gather over the whole job, shard_map, smap and jit of vmap on global arrays), and the
mistakes JAX reports as a bare `AssertionError` or a squeeze error are explained in the
job's terms, as AxisCheckErrors of JAX's type, by a call and by `predict` alike.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # two processes that import jax and compile: several seconds

SCRIPT = Path(__file__).resolve().parent / "multiprocess_job.py"
SRC = Path(__file__).resolve().parent.parent / "src"
TIMEOUT = 240  # seconds for the whole job; it takes about 10 on 2 busy cores
LOCAL, GLOBAL = 4, 8


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_job() -> tuple[list[subprocess.Popen[str]], list[tuple[str, str]]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    port = _free_port()
    procs = [
        subprocess.Popen(
            [sys.executable, str(SCRIPT), str(port), str(i)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in (0, 1)
    ]
    outputs: list[tuple[str, str]] = []
    try:
        for p in procs:
            outputs.append(p.communicate(timeout=TIMEOUT))
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        pytest.fail(f"the two-process job did not finish in {TIMEOUT} s")
    return procs, outputs


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    """Both processes' records, process 0 first. A port taken between finding it free
    and the coordinator binding it gets one more try."""
    for attempt in range(2):
        procs, outputs = _run_job()
        if all(p.returncode == 0 for p in procs):
            return [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
        errors = "\n".join(err[-3000:] for _, err in outputs)
        if attempt == 0 and "address already in use" in errors.lower():
            continue
        pytest.fail(f"the two-process job failed:\n{errors}")
    raise AssertionError("unreachable")


def test_the_job_has_two_processes_of_four_devices(records: list[dict[str, Any]]) -> None:
    for r in records:
        assert (r["process_count"], r["device_count"], r["local_device_count"]) == (2, GLOBAL, LOCAL)


AGREEING = [
    "pmap_psum_axis_index",
    "pmap_all_gather",
    "pmap_global_axis_size",
    "pmap_signature",
    "jit_pmap_4",
    "jit_pmap_2",
    "jit_pmap_all_gather",
    "shard_map_global",
    "jit_vmap_global",
    "smap_global",
]


@pytest.mark.parametrize("scenario", AGREEING)
def test_values_and_shapes_agree_with_jax(records: list[dict[str, Any]], scenario: str) -> None:
    for r in records:
        seen = r[scenario]
        assert "error" not in seen["jax"], seen["jax"]
        assert seen["ax"] == seen["jax"]  # shape, and the values this process holds
        if "predict" in seen:
            assert seen["predict"]["shape"] == seen["jax"]["shape"]
    # Collectives reach across the job: the processes' psums agree, their rows do not.
    if scenario == "pmap_psum_axis_index":
        first, second = (r[scenario]["jax"]["value"] for r in records)
        assert [row[0] - i for i, row in enumerate(first)] == [row[0] - i - 4 for i, row in enumerate(second)]
    if scenario == "pmap_all_gather":  # each device gathers all 8 devices' rows, not its process's 4
        assert records[0][scenario]["jax"]["shape"] == [LOCAL, GLOBAL, 3]
    if scenario == "jit_pmap_all_gather":  # traced inside jit, a pmap runs on this process's devices alone
        assert records[0][scenario]["jax"]["shape"] == [LOCAL, LOCAL, 3]
    if scenario == "jit_vmap_global":
        assert all(r[scenario]["sharding_agrees"] for r in records)


def _explained_as_jax(seen: dict[str, Any], jax_error: str) -> None:
    """axischeck's error is an AxisCheckError and an instance of the type JAX raised."""
    assert "AxisCheckError" in seen["types"] and jax_error in seen["types"], seen["types"]


@pytest.mark.parametrize("size", [GLOBAL, LOCAL + 1, 2])
def test_pmap_of_another_size_than_the_local_device_count_is_explained(
    records: list[dict[str, Any]], size: int
) -> None:
    """JAX says `AssertionError` (no message), "cannot select an axis to squeeze out", or
    (process 1, size 2) "zero-size array to reduction operation minimum"."""
    for process, r in enumerate(records):
        seen = r[f"pmap_size_{size}"]
        jax_error = seen["jax"]["error"]
        assert jax_error in ("AssertionError", "ValueError")
        for how in ("ax", "signature"):  # diagnosed after JAX refused; refused before JAX ran
            _explained_as_jax(seen[how], jax_error)
        assert seen["ax"]["job"] == {"processes": 2, "process": process, "local_devices": LOCAL, "global_devices": 8}
        message = seen["ax"]["message"]
        head = message.splitlines()[0]
        assert re.search(rf"axis 0 of x \(size {size}\)", head)
        assert f"this is process {process} of a job of 2" in head
        assert f"one slice per device of its {LOCAL} local devices, so every process maps {LOCAL}" in head
        assert (f"{GLOBAL} is the job's global device count" in head) == (size == GLOBAL)
        assert "JAX: " in message  # JAX's own words kept
        fix = message.split("Hint: ", 1)[1]
        if size > LOCAL:
            assert "reshape to (jax.local_device_count(), -1, ...)" in fix
        if size == GLOBAL:
            assert "here to (4, 2, 3)" in fix
        if size < LOCAL:
            assert "devices= listing 2 device(s) of each process" in fix
        # predict answers the same way, before anything runs.
        assert seen["predict"]["message"].splitlines()[0] == head
        assert seen["predict"]["job"] == seen["ax"]["job"]


def test_pmap_traced_in_jit_runs_on_this_processs_devices(records: list[dict[str, Any]]) -> None:
    for r in records:
        seen = r["jit_pmap_size_8"]
        _explained_as_jax(seen["ax"], seen["jax"]["error"])
        assert "traced inside jax.jit or another transform" in seen["ax"]["message"]
        assert f"this process's {LOCAL} local devices alone (of the job's {GLOBAL})" in seen["ax"]["message"]


@pytest.mark.parametrize("scenario", ["shard_map_local_data", "smap_local_data", "jit_shard_map_local_data"])
def test_process_local_data_on_a_global_mesh_names_the_remedy(records: list[dict[str, Any]], scenario: str) -> None:
    for r in records:
        seen = r[scenario]
        _explained_as_jax(seen["ax"], seen["jax"]["error"])
        message = seen["ax"]["message"]
        assert "8 does not divide 4" in message
        assert "the mesh spans the job's 2 processes (8 devices, 4 of them this process's)" in message
        remedy = "jax.make_array_from_process_local_data(NamedSharding(mesh, P('x',)), a), of global shape (8, 3)"
        assert remedy in message.split("Hint: ", 1)[1]
        # A NumPy array is this process's own; under jit the tracer cannot say, so it may be.
        own = scenario != "jit_shard_map_local_data"
        assert ("a is this process's own data" in message) == own
        if "predict" in seen:
            assert seen["predict"]["message"].splitlines()[0] == message.splitlines()[0]

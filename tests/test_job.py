"""pmap and shard_map in a job of several processes, modelled on one: a `Job` stands in for
the job a process would see (`this_job`), so the rules and messages are checked in the
quick suite. `test_multiprocess.py` runs a real job of two processes against JAX.

The outcomes in `MEASURED` were measured with JAX 0.10.2 and 0.12.1 in a job of two
processes of 4 CPU devices each (gloo collectives): whether `jax.pmap` runs a call on
each process, for a process's mapped size, `axis_size` and `devices`.
"""

from __future__ import annotations

import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.sharding import PartitionSpec as P

import axischeck as ax
from axischeck._core._job import Job

OWNERS = (0,) * 4 + (1,) * 4  # two processes of 4 devices each, as JAX groups them


def job(process: int, owners: tuple[int, ...] = OWNERS) -> Job:
    return Job(processes=2, process=process, local_devices=4, owners=owners)


# (size mapped on each process, axis_size, devices given as their owners) -> runs on (process 0, process 1)
MEASURED: list[tuple[int, int | None, tuple[int, ...] | None, tuple[bool, bool]]] = [
    (4, None, None, (True, True)),
    (8, None, None, (False, False)),  # "cannot select an axis to squeeze out"
    (5, None, None, (False, False)),  # AssertionError
    (2, None, None, (False, False)),  # AssertionError on 0; "zero-size array ..." on 1
    (1, None, None, (False, False)),
    (4, 8, None, (True, True)),  # axis_size is the global size
    (4, 16, None, (True, True)),  # more than the job has: its 8 devices
    (4, 4, None, (True, False)),  # process 0's devices alone: process 1 holds none
    (2, 4, None, (False, False)),
    (2, None, (0, 0, 1, 1), (True, True)),  # devices=: two of each process's
    (4, None, (0, 0, 1, 1), (False, False)),
    (4, None, OWNERS, (True, True)),  # devices=jax.devices()
]


@pytest.mark.parametrize(("size", "axis_size", "devices", "runs"), MEASURED)
def test_the_job_model_runs_what_jax_runs(
    size: int, axis_size: int | None, devices: tuple[int, ...] | None, runs: tuple[bool, bool]
) -> None:
    for process in (0, 1):
        j = job(process, devices if devices is not None else OWNERS)
        assert (j.held_here(size, axis_size) == size) == runs[process]


def test_traced_a_pmap_uses_this_processs_devices() -> None:
    """Inside jax.jit (measured): any size from 1 to 4 runs, on each process alone."""
    traced = Job(2, 1, 4, OWNERS, local_only=True)
    assert [traced.held_here(n, None) == n for n in (1, 2, 4, 5, 8)] == [True, True, True, False, False]


@pytest.fixture
def in_a_job(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Makes pmaps created after it see process `process` of the two-process job."""

    def enter(process: int) -> None:
        monkeypatch.setattr("axischeck._pmap.this_job", lambda devices=None, backend=None: job(process))
        monkeypatch.setattr("axischeck._engine._shard_model.this_job", lambda: job(process))

    return enter


def _psum() -> Any:
    """A new function each time: transforms of one function with the same options share
    what they found of the devices (a process's job never changes), and each test
    here enters another."""
    return lambda x: lax.psum(x, "i")


@pytest.mark.parametrize("process", [0, 1])
def test_predict_maps_each_processs_share(in_a_job: Any, process: int) -> None:
    in_a_job(process)
    f = ax.pmap(lambda x: lax.all_gather(x, "i"), axis_name="i")
    assert f.predict((4, 3)).shapes == (4, 8, 3)  # each device gathers from the job's 8
    g = ax.pmap(lambda x: lax.all_gather(x, "i"), axis_name="i", axis_size=8)
    assert g.predict((4, 3)).shapes == (4, 8, 3)  # axis_size: the global size, not compared to 4
    h = ax.pmap(lambda x: lax.psum_scatter(x, "i"), axis_name="i")
    assert h.predict((4, 8)).shapes == (4,)  # scatters over 8 devices
    assert ax.pmap(_psum(), axis_name="i").predict_with_devices(8, (8, 3)).shapes == (8, 3)  # a machine of its own


@pytest.mark.parametrize(
    ("size", "says", "fix"),
    [
        (
            8,
            r"; 8 is the job's global device count",
            r"reshape to \(jax.local_device_count\(\), -1, ...\).*\(4, 2, 3\)",
        ),
        (5, r"every process maps 4 \(", r"pad axis 0 to a multiple of 4"),
        (2, r"every process maps 4 \(", r"devices= listing 2 device\(s\) of each process"),
    ],
)
@pytest.mark.parametrize("process", [0, 1])
def test_a_size_other_than_the_share_is_explained(in_a_job: Any, process: int, size: int, says: str, fix: str) -> None:
    in_a_job(process)
    f = ax.pmap(_psum(), axis_name="i")
    with pytest.raises(ax.ArgumentError) as info:
        f.predict((size, 3))
    err = info.value
    assert err.job is not None
    assert (err.job.processes, err.job.process, err.job.local_devices, err.job.global_devices) == (2, process, 4, 8)
    assert err.symbol == "batch size i"
    assert [p.describe() for p in err.places] == [f"axis 0 of x (size {size})"]
    assert err.problem.startswith(f"pmap maps axis 0 of x (size {size}) over devices, but this is process {process}")
    assert "one slice per device of its 4 local devices" in err.problem
    assert re.search(says, err.problem)
    assert err.hint is not None and re.search(fix, err.hint)
    held = 0 if size == 2 and process == 1 else 4  # a pmap of 2 per process is laid over process 0's 4
    assert f"{held} of them this process's" in err.problem


def test_a_global_axis_size_that_leaves_a_process_out_is_explained(in_a_job: Any) -> None:
    in_a_job(1)
    with pytest.raises(ax.ArgumentError) as info:
        ax.pmap(_psum(), axis_name="i", axis_size=4).predict((4, 3))
    assert "the first 4 devices, 0 of them this process's" in info.value.problem
    assert info.value.hint == "leave axis_size out: in a job it is the global size, here 8"
    in_a_job(0)
    assert ax.pmap(_psum(), axis_name="i", axis_size=4).predict((4, 3)).shapes == (4, 3)


@pytest.mark.parametrize(
    ("arg", "own"), [(np.zeros((4, 3), np.float32), True), (jax.ShapeDtypeStruct((4, 3), jnp.float32), False)]
)
def test_process_local_data_on_a_mesh_of_the_job_names_the_remedy(in_a_job: Any, arg: Any, own: bool) -> None:
    in_a_job(0)
    f = ax.shard_map(lambda a: lax.psum(a, "x"), mesh={"x": 8}, in_specs=P("x"), out_specs=P())
    with pytest.raises(ax.ArgumentError) as info:
        f.predict(arg)
    err = info.value
    assert err.job is not None and err.job.global_devices == 8
    assert "8 does not divide 4" in err.problem
    assert "the mesh spans the job's 2 processes (8 devices, 4 of them this process's)" in err.problem
    assert ("a is this process's own data" in err.problem) == own
    assert err.hint is not None
    assert "jax.make_array_from_process_local_data(NamedSharding(mesh, P('x',)), a)" in err.hint
    assert err.hint.startswith("if a is this process's part") != own


def test_a_mesh_of_this_processs_devices_keeps_the_usual_fix(in_a_job: Any) -> None:
    in_a_job(0)
    f = ax.shard_map(lambda a: lax.psum(a, "x"), mesh={"x": 4}, in_specs=P("x"), out_specs=P())
    with pytest.raises(ax.ArgumentError) as info:
        f.predict(np.zeros((6, 3), np.float32))
    assert info.value.job is None
    assert "make_array_from_process_local_data" not in str(info.value)


def test_one_process_is_no_job() -> None:
    from axischeck._core._job import this_job

    assert this_job() is None
    with pytest.raises(ax.ArgumentError) as info:
        ax.pmap(_psum(), axis_name="i").predict((16, 3))
    assert info.value.job is None


def test_the_job_docstring_example_runs() -> None:
    """As `test_docstrings.py` runs the public names' examples (Job is reached through
    `AxisCheckError.job`): Markdown fences read as blank lines."""
    import doctest

    text = re.sub(r"^[ \t]*```.*$", "", Job.__doc__ or "", flags=re.MULTILINE)
    test = doctest.DocTestParser().get_doctest(text, {"Job": Job}, "Job", None, 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert test.examples and runner.summarize(verbose=False).failed == 0


def test_a_job_error_pickles_with_its_facts(in_a_job: Any) -> None:
    """Errors cross process boundaries (multiprocessing, a job's logs): the facts go too."""
    import pickle

    in_a_job(1)
    with pytest.raises(ax.ArgumentError) as info:
        ax.pmap(_psum(), axis_name="i").predict((8, 3))
    back = pickle.loads(pickle.dumps(info.value))
    assert back.job == info.value.job and str(back) == str(info.value)


def test_devices_that_leave_this_process_out_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """`devices=` (the same list on every process) holding none of this process's devices:
    JAX's mesh then holds none of them, which fails converting this process's arguments
    (measured with `axis_size=4` on process 1: "zero-size array to reduction ...")."""
    monkeypatch.setattr("axischeck._pmap.this_job", lambda devices=None, backend=None: job(1, (0, 0)))
    with pytest.raises(ax.ArgumentError) as info:
        ax.pmap(_psum(), axis_name="i").predict((2, 3))
    assert "none of the 2 devices in pmap's devices= is this process's" in info.value.problem

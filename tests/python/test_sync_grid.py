"""T.sync_grid: a barrier of the whole grid (TileLang's persistent MLA decode combines its split-KV partials after
one). CUDA only: cooperative groups' grid sync, and the kernel is launched cooperatively (every block resident).
Both emulators run the blocks of such a grid as live at once, one at a time, handing the turn on at the barrier
(the IR emulator) or at the barrier's spin loads (the PTX emulator, which runs NVIDIA's own cooperative-groups
code from the toolkit); the CPU target runs a thread per block. Against NumPy in float64 on seeded inputs, ragged
block counts; the refusals elsewhere."""
import numpy as np
import pytest

import kernels
import tilelang
from tilelang.errors import TileLangEmulationError, TileLangUnsupportedError

SEED = 20261206


def _data(nb):
    rng = np.random.default_rng(SEED + nb)
    print("seed", SEED + nb)
    x = (rng.random(nb * 64) + 0.5).astype(np.float32)
    sums = x.astype(np.float64).reshape(nb, 64).sum(1)
    return x, x.astype(np.float64) / np.repeat(np.roll(sums, -1), 64)


@pytest.mark.parametrize("backend", ["emulator", "ptx"])
@pytest.mark.parametrize("nb", [1, 3, 8])
def test_grid_barrier_orders_the_phases(nb, backend):
    """before: T.sync_grid was not a name of the language. expected: every block reads every other block's phase-1
    result (the conftest twin runs the emulator's kernels at PTX level as well)."""
    x, want = _data(nb)
    p, y = np.zeros(nb, np.float32), np.zeros_like(x)
    tilelang.compile(kernels.grid_two_phase(nb), target="cuda", execution_backend=backend)(x, p, y)
    np.testing.assert_allclose(y, want, rtol=1e-5)


def test_without_the_barrier_blocks_read_sums_not_yet_written():
    """The same program without T.sync_grid: blocks run one after another, so a block reads the next block's sum
    before it exists (zero here): the barrier is what makes the result right."""
    x, want = _data(4)
    p, y = np.zeros(4, np.float32), np.zeros_like(x)
    tilelang.compile(kernels.grid_two_phase(4, sync=False), target="cuda", execution_backend="ptx")(x, p, y)
    assert np.isinf(y[:3 * 64]).all() and np.allclose(y[3 * 64:], want[3 * 64:], rtol=1e-5)


def test_cuda_code_and_the_cooperative_launch():
    k = tilelang.compile(kernels.grid_two_phase(8), target="cuda -arch=sm_90a")
    assert "cooperative_groups::this_grid().sync()" in k.get_kernel_source()
    ptx = k.get_ptx()
    # the grid workspace of a cooperative launch (%envreg1/2), the arrival and the spin on it
    assert "%envreg1" in ptx and "%envreg2" in ptx and "atom.add.release.gpu" in ptx and "ld.acquire.gpu" in ptx
    assert k._compiled.cooperative and not tilelang.compile(kernels.grid_two_phase(8, sync=False), target="cuda")._compiled.cooperative


@pytest.mark.parametrize("backend", ["emulator", "ptx"])
def test_a_block_that_never_reaches_the_barrier_is_a_deadlock(backend):
    x, _ = _data(3)
    k = tilelang.compile(kernels.grid_two_phase(3, skip_block=1), target="cuda", execution_backend=backend)
    with pytest.raises(TileLangEmulationError) as e:
        k(x, np.zeros(3, np.float32), np.zeros_like(x))
    assert "deadlock" in {kind for kind, _ in e.value.reports}, str(e.value)


@pytest.mark.parametrize("nb", [1, 3, 8, 40])
def test_cpu_target_runs_a_thread_per_block(nb):
    """The CPU target runs a grid with T.sync_grid as one OpenMP thread per block (all live at once), the grid
    barrier being the team's barrier. Before: refused ("the CPU target runs blocks one after another")."""
    x, want = _data(nb)
    p, y = np.zeros(nb, np.float32), np.zeros_like(x)
    k = tilelang.compile(kernels.grid_two_phase(nb), target="cpu")
    k(x, p, y)
    np.testing.assert_allclose(y, want, rtol=1e-5)
    src = k.get_kernel_source()
    assert "#pragma omp barrier" in src and "num_threads((int)(tl_g0 * tl_g1 * tl_g2))" in src


def test_cpu_grid_larger_than_the_thread_limit_is_an_error():
    import os
    import subprocess
    import sys

    code = ("import numpy as np, kernels, tilelang\n"
            "k = tilelang.compile(kernels.grid_two_phase(6), target='cpu')\n"
            "x = np.ones(6 * 64, np.float32)\n"
            "k(x, np.zeros(6, np.float32), np.zeros_like(x))\n")
    env = dict(os.environ, OMP_THREAD_LIMIT="4", PYTHONPATH=os.path.dirname(__file__) + os.pathsep +
               os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode != 0
    assert "its 6 blocks must all be live at once, but OpenMP started 4 threads" in p.stderr, p.stderr[-2000:]


@pytest.mark.parametrize("target,name", [("hip", "HIP"), ("metal", "Metal"), ("opencl", "OpenCL")])
def test_other_targets_refuse_it(target, name):
    with pytest.raises(TileLangUnsupportedError, match="T.sync_grid"):
        tilelang.compile(kernels.grid_two_phase(2), target=target, execution_backend="emulator")

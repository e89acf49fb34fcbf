"""A bounded run of the random-program fuzzer (tests/fuzz/programs.py): random tile programs run on
the CPU backend and the CUDA emulator and are compared with NumPy. The run stops after a time
budget; the first seed is printed (set TL_FUZZ_SEED to choose it, e.g. to replay a CI failure).
The long run is `python tests/fuzz/run_fuzz.py --minutes 30`.
"""
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fuzz"))

import programs  # noqa: E402

BUDGET_S = float(os.environ.get("TL_FUZZ_BUDGET_S", "25"))


def test_random_programs_agree_with_numpy():
    seed = int(os.environ.get("TL_FUZZ_SEED", "20261130"))
    print(f"fuzz: first seed {seed}, budget {BUDGET_S:.0f} s")
    t0 = time.time()
    ran, failures = [], []
    while time.time() - t0 < BUDGET_S or len(ran) < 4:
        case = programs.generate(seed)
        ran.append((seed, case.kind))
        bad = programs.run_case(case)
        if bad:
            failures.append(case.describe() + "\n" + "\n".join(bad))
        seed += 1
        if len(ran) >= 200:
            break
    print(f"fuzz: {len(ran)} programs: " + ", ".join(f"{s}:{k}" for s, k in ran))
    assert not failures, "\n\n".join(failures)


def test_copy_corners_family():
    """The generator of tile copies at negative and overhanging corners (the reliability issue's heap
    corruption on the CPU target), a fixed set of seeds on the CPU and the sm_80 / sm_90a emulators."""
    failures, kinds = [], []
    for seed in range(6):
        case = programs.copy_corners(seed)
        kinds.append(case.kind)
        bad = programs.run_case(case)
        if bad:
            failures.append(case.describe() + "\n" + "\n".join(bad))
    print("copy corners:", kinds)
    assert any("(-" in k for k in kinds), "the seeds must include a start before the tensor"
    assert not failures, "\n\n".join(failures)


def test_big_fragments_family():
    """The generator of large per-thread fragments (the reliability issue's compile blow-up), fixed seeds."""
    failures, kinds = [], []
    for seed in range(4):
        case = programs.big_fragments(seed)
        kinds.append(case.kind)
        bad = programs.run_case(case)
        if bad:
            failures.append(case.describe() + "\n" + "\n".join(bad))
    print("big fragments:", kinds)
    assert any("dim=0" in k for k in kinds) and any("dim=1" in k for k in kinds), kinds
    assert not failures, "\n\n".join(failures)


def test_source_mutants_fail_clearly_or_work():
    """The mutation fuzzer (tests/fuzz/mutate.py) over the reference kernels, in a child process so a
    crash shows as a bad exit status: every mutant compiles and emulates, or fails with a clear
    tilelang error (never an internal error, a raw Python exception from tilelang or a crash)."""
    import subprocess

    seed = os.environ.get("TL_MUTATE_SEED", "7")
    r = subprocess.run([sys.executable, os.path.join(HERE, "..", "fuzz", "mutate.py"), "--seed", seed, "--seconds",
                        os.environ.get("TL_MUTATE_BUDGET_S", "10")], capture_output=True, text=True, timeout=600)
    print(r.stdout[-4000:])
    assert r.returncode == 0, r.stdout[-8000:] + r.stderr[-4000:]
    assert " 0 findings" in r.stdout


def test_a_select_on_an_unknown_comparison_is_unknown():
    """Seed 815796 (found on OpenCL in CI): `T.if_then_else(T.min(T.if_then_else(a > a, b, a), ...) > y, c, y)`.
    The inner select compares a value with itself, a tie the reference marks unknown (NaN); the outer comparison
    then read NaN > y as false and expected y, where every target (rightly) gave c. The outer select must be
    unknown too, so the reference never asserts a branch the rounding may decide."""
    case = programs.generate(815796)
    assert "a > a" in case.func.script()
    assert np.isnan(case.reference[0]).all()
    assert programs.run_case(case) == []

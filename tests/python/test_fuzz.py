"""A bounded run of the random-program fuzzer (tests/fuzz/programs.py): random tile programs run on
the CPU backend and the CUDA emulator and are compared with NumPy. The run stops after a time
budget; the first seed is printed (set TL_FUZZ_SEED to choose it, e.g. to replay a CI failure).
The long run is `python tests/fuzz/run_fuzz.py --minutes 30`.
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fuzz"))

import programs  # noqa: E402

BUDGET_S = float(os.environ.get("TL_FUZZ_BUDGET_S", "50"))


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

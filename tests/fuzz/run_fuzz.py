"""Long-running fuzzer: generates random tile programs (tests/fuzz/programs.py) and runs each on the
CPU backend and the CUDA emulator against NumPy. Prints the seed of every program; every failure
is printed with its program and written to --out, so it can become a regression test.

    python tests/fuzz/run_fuzz.py --minutes 30              # seeds from the clock
    python tests/fuzz/run_fuzz.py --seed 1234 --count 1 --show   # reproduce one program
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import programs  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=None, help="first seed (default: from the clock)")
    ap.add_argument("--count", type=int, default=None, help="number of programs (default: until --minutes)")
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--show", action="store_true", help="print every program")
    ap.add_argument("--out", default="fuzz-failures.txt")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int(time.time()) % 1_000_000_000
    deadline = time.time() + 60 * args.minutes
    n = bad = 0
    while (args.count is None or n < args.count) and (args.count is not None or time.time() < deadline):
        case = programs.generate(seed)
        print(f"seed {seed}: {case.kind}", flush=True)
        if args.show:
            print(case.source)
        failures = programs.run_case(case)
        if failures:
            bad += 1
            report = case.describe() + "\n" + "\n".join(failures) + "\n" + "-" * 80 + "\n"
            print(report, flush=True)
            with open(args.out, "a") as f:
                f.write(report)
        n += 1
        seed += 1
    print(f"{n} programs, {bad} failing" + (f" (written to {args.out})" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""Source-mutation fuzzer: takes the reference kernels of tests/python/kernels.py, applies one random
mutation to one kernel's source (a constant, an operator, a dtype string, a keyword, a dropped
statement), and compiles the result for the emulator (sm_80 lowering, codegen, emulation on random
inputs). A mutant must either work or fail with a clear tilelang error; a TileLangInternalError,
any other Python exception, or a crash of the process is a finding.

    python tests/fuzz/mutate.py --seed 7 --count 200       # prints a line per mutant
"""
import argparse
import ast
import importlib.util
import os
import random
import sys
import tempfile
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "..", "python", "kernels.py")

# (factory, positional args, keyword args): small instances of every reference kernel.
CALLS = [
    ("matmul", (128, 128, 64), {"block_M": 64, "block_N": 64}),
    ("matmul_transposed", (128, 96, 64, 64, 32, 32), {"trans_A": True}),
    ("matmul_transposed", (128, 96, 64, 64, 32, 32), {"trans_B": True}),
    ("flashattn", (1, 1, 64, 64), {"is_causal": True}),
    ("rms_norm", (64, 128, 8), {}),
    ("softmax", (64, 128, 8), {}),
    ("matmul_splitk", (64, 64, 128, 64, 64, 32), {"split_k": 2}),
    ("cumsum", (64, 64, 32, 32), {}),
    ("elementwise_add", (), {}),
    ("axpb", (), {}),
]

_CONSTS = [0, 1, -1, 2, 3, 7, 16, 17, 31, 64, -64, 127, 129, 2**31 - 1, 2**31, 2**40, 10**400, 1.5, -0.0, 0.5,
           float("inf"), float("nan"), True, None]
_DTYPES = ["float16", "bfloat16", "float32", "float64", "int8", "int32", "int64", "uint8", "int4", "bool",
           "float8_e4m3fn", "handle", "float16x4", "float128", ""]
_BINOPS = [ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.BitAnd, ast.LShift]


def _factories(tree):
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def mutate(source, factory, rng):
    """One mutant of `factory` in the module `source`; returns (new source, description)."""
    tree = ast.parse(source)
    fdef = _factories(tree)[factory]
    nodes = [n for n in ast.walk(fdef) if n is not fdef]
    for _ in range(100):
        n = rng.choice(nodes)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in _DTYPES + ["float16", "float32"]:
            new = rng.choice(_DTYPES)
            desc = f"line {n.lineno}: dtype {n.value!r} -> {new!r}"
            n.value = new
        elif isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
            new = rng.choice(_CONSTS)
            desc = f"line {n.lineno}: constant {n.value!r} -> {new!r}"
            n.value = new
        elif isinstance(n, ast.BinOp):
            new = rng.choice(_BINOPS)
            desc = f"line {n.lineno}: operator {type(n.op).__name__} -> {new.__name__}"
            n.op = new()
        elif isinstance(n, ast.keyword) and n.arg is not None:
            new = rng.choice(_CONSTS)
            desc = f"line {n.value.lineno}: keyword {n.arg}= -> {new!r}"
            n.value = ast.Constant(new)
        elif isinstance(n, (ast.For, ast.With, ast.If)) and n.body and len(n.body) > 1:
            k = rng.randrange(len(n.body))
            desc = f"line {n.body[k].lineno}: statement dropped"
            del n.body[k]
        elif isinstance(n, ast.Call) and n.args and rng.random() < 0.3:
            desc = f"line {n.lineno}: call argument {len(n.args) - 1} dropped"
            n.args.pop()
        elif isinstance(n, ast.Call) and n.args:
            k = rng.randrange(len(n.args))
            desc = f"line {n.lineno}: call argument {k} starred"
            n.args[k] = ast.Starred(value=n.args[k], ctx=ast.Load())
        else:
            continue
        ast.fix_missing_locations(tree)
        return ast.unparse(tree), desc
    return source, "no mutation"


def run_mutant(source, factory, args, kwargs, workdir, tag, emulate=True):
    """Compiles (and, with `emulate`, runs) one mutant; returns None when it worked or failed clearly,
    else a finding."""
    import tilelang
    from tilelang.errors import TileLangError, TileLangInternalError

    path = os.path.join(workdir, f"kernels_mutant_{tag}.py")
    with open(path, "w") as f:
        f.write(source)
    try:
        spec = importlib.util.spec_from_file_location(f"kernels_mutant_{tag}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        func = getattr(mod, factory)(*args, **kwargs)
        k = tilelang.compile(func, target="cuda -arch=sm_80", execution_backend="emulator")
        if emulate:
            import kernel_args

            k(*kernel_args.random_args(func, np.random.default_rng(0)))
        print("  ok (compiled" + (" and ran)" if emulate else ")"), flush=True)
        return None
    except TileLangInternalError:
        return traceback.format_exc(limit=4)
    except TileLangError as e:
        print(f"  rejected: {type(e).__name__}: {str(e).splitlines()[0][:160]}", flush=True)
        return None
    except RecursionError:
        return traceback.format_exc(limit=4)
    except Exception as e:  # a mutant may be plain broken Python outside the kernel (factory code)
        tb = traceback.extract_tb(e.__traceback__)
        if any("tilelang" in fr.filename for fr in tb):
            return traceback.format_exc(limit=6)
        print(f"  the mutant's own Python failed: {type(e).__name__}: {str(e)[:120]}", flush=True)
        return None  # the mutant's own Python (outside the DSL) failed before reaching tilelang


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--count", type=int, default=None)
    ap.add_argument("--seconds", type=float, default=60.0)
    args = ap.parse_args()
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    import warnings

    warnings.simplefilter("ignore")
    seed = args.seed if args.seed is not None else int(time.time()) % 1_000_000_000
    print(f"mutation fuzzer: first seed {seed}", flush=True)
    source = open(KERNELS).read()
    findings = 0
    n = 0
    t0 = time.time()
    with tempfile.TemporaryDirectory() as workdir:
        while (args.count is None or n < args.count) and (args.count is not None or time.time() - t0 < args.seconds):
            rng = random.Random(seed)
            factory, fargs, fkw = rng.choice(CALLS)
            mutant, desc = mutate(source, factory, rng)
            print(f"seed {seed}: {factory}: {desc}", flush=True)
            # A mutant with a huge constant may describe a valid but enormous amount of work
            # (a loop of 2^31 iterations): compile it, but do not run it.
            huge = any(w.lstrip("-").isdigit() and abs(int(w)) >= 2**16 for w in desc.replace("->", " ").split())
            finding = run_mutant(mutant, factory, fargs, fkw, workdir, seed, emulate=not huge and "inf" not in desc)
            if finding:
                findings += 1
                print(f"FINDING seed {seed}: {factory}: {desc}\n{finding}", flush=True)
            seed += 1
            n += 1
    print(f"{n} mutants, {findings} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())

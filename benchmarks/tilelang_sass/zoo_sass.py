"""TileLang's SASS per main-loop iteration for this project's kernel zoo: the figures bench_zoo.py records in its
"TileLang 0.1.15 loop/iter" column. Each zoo program (examples/zoo, bench_zoo.py's sizes) is compiled by TileLang
from PyPI for sm_80 and sm_90a with its own nvcc flags; the cubin TileLang hands to nvcc is kept and counted with
bench_cuda_sass.analyse, as bench_zoo.py counts ours. No GPU and no torch needed (torch_stub stands in for it).

Setup (a separate virtual environment; TileLang's wheel bundles its own TVM):
  python3 -m venv /tmp/tlvenv
  /tmp/tlvenv/bin/pip install --no-deps tilelang==0.1.15 "apache-tvm-ffi<0.1.13" cloudpickle psutil tqdm \\
      "z3-solver<4.15.5" ml-dtypes numpy typing-extensions
Run (from the repository root; cuobjdump from the project's .venv):
  PYTHONPATH=benchmarks/tilelang_sass/torch_stub TILELANG_LOG_LEVEL=WARNING \\
      /tmp/tlvenv/bin/python benchmarks/tilelang_sass/zoo_sass.py [NAME-SUBSTRING]
"""
import glob
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import tilelang  # noqa: E402  (TileLang's, from the environment running this script)
import tvm  # noqa: E402
from tilelang.contrib import nvcc  # noqa: E402

from examples.zoo import attention, dequant, flash_attention, gemm, mla  # noqa: E402,F401


def _load(path, names, drop_prefixes=()):
    """The named top-level functions of one of our benchmark scripts, without importing our tilelang."""
    src = open(path).read()
    keep = "\n".join(line for line in src.split("\n") if not line.startswith(drop_prefixes))
    ns = {"__file__": path, "__name__": "loaded", "attention": attention, "dequant": dequant,
          "flash_attention": flash_attention, "gemm": gemm, "mla": mla}
    exec(compile(keep, path, "exec"), ns)
    return [ns[n] for n in names]


analyse, disassemble = _load(os.path.join(ROOT, "benchmarks", "bench_cuda_sass.py"), ["analyse", "disassemble"],
                             ("import tilelang", "from tilelang", "import kernels", "sys.path"))
cases, = _load(os.path.join(ROOT, "benchmarks", "bench_zoo.py"), ["cases"],
               ("import tilelang", "from tilelang", "from bench_cuda_sass", "from examples", "sys.path"))

_captured = []
_compile_cuda = nvcc.compile_cuda


def _keep_cubin(code, target_format="ptx", *args, **kwargs):
    out = _compile_cuda(code, target_format, *args, **kwargs)
    if target_format in ("cubin", "fatbin"):
        _captured.append(out)
    return out


nvcc.compile_cuda = _keep_cubin


def main():
    only = sys.argv[1] if len(sys.argv) > 1 else None
    tools = next(d for d in glob.glob(os.path.join(ROOT, ".venv", "lib", "python*", "site-packages", "nvidia", "*",
                                                   "bin")) if os.path.exists(os.path.join(d, "cuobjdump")))
    tilelang.disable_cache()
    print(f"TileLang {tilelang.__version__}: SASS per main-loop iteration of the kernel zoo")
    print("| kernel | arch | threads | loop/iter | unrolled | tensor-core instructions | total SASS |")
    print("|---|---|---|---|---|---|---|")
    for name, make, gemms in cases():
        if only and only not in name:
            continue
        for arch in ("sm_80", "sm_90a"):
            _captured.clear()
            f = make()
            m = re.search(r'tl.launch_threads": \[(\d+)', f.script())
            threads = int(m.group(1))
            target = tvm.target.Target({"kind": "cuda", "arch": arch})
            try:
                with target:
                    tilelang.compile(f, target=target)
            except Exception as e:  # noqa: BLE001 (TileLang's errors have no common base)
                if not _captured:
                    print(f"| {name} | {arch} | error: {str(e).strip().splitlines()[-1][:100]} |")
                    continue
            ins = disassemble(_captured[-1], tools)
            # The program's threads are the consumers (TileLang adds its producer warp group on top): per warp
            # for mma.sync, per warp group for wgmma.
            units = threads // 128 if any("GMMA" in t for _, t in ins) else threads // 32
            r = analyse(ins, sum(a * b * c for a, b, c in gemms) / units)
            print(f"| {name} | {arch} | {threads} | {r['loop']} | {r['unroll']} | {r['hmma']} | {r['total']} |",
                  flush=True)


if __name__ == "__main__":
    main()

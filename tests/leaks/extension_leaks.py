"""Leak check of the Python extension: drives the C++ core through the bindings (parse, compile for
every target kind that builds here, run on the CPU and in the emulator, errors raised from C++, lower
traces) many times, then drops every object. Run by scripts/test_python_asan.sh under LeakSanitizer,
which writes its report to $LSAN_REPORT_PREFIX.<pid>; check_report() fails on any leak whose allocation
stack passes through TileLang-C++ (libtilelang_core or the _ffi module). CPython's own allocations kept
at exit are not ours and are ignored. nanobind's own check (instances alive at interpreter exit) must
stay silent too: the script's stderr is checked for it."""
import gc
import os
import re
import subprocess
import sys

ROUNDS = 3


def workload():
    # Leak checking is for this process only: the host compiler it starts would inherit the options,
    # report its own leaks and exit non-zero.
    os.environ["ASAN_OPTIONS"] = ":".join(
        [o for o in os.environ.get("ASAN_OPTIONS", "").split(":") if o and not o.startswith(("detect_leaks=", "log_path="))]
        + ["detect_leaks=0"])
    import numpy as np

    import tilelang
    import tilelang.language as T
    from tilelang.errors import TileLangError

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
    import kernels

    for r in range(ROUNDS):
        f = kernels.matmul(64, 64, 64)
        a, b = np.ones((64, 64), "float16"), np.ones((64, 64), "float16")
        c = np.zeros((64, 64), "float16")
        tilelang.compile(f, target="cpu")(a, b, c)
        tilelang.compile(f, target="cuda", execution_backend="emulator")(a, b, c)
        tilelang.compile(f, target="cuda -arch=sm_80").get_kernel_source()
        tilelang.tools.ir_lower_trace(f, target="cuda -arch=sm_80")

        @T.prim_func
        def bad(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=32) as bx:
                A[1000] = 0.0  # provably out of bounds: an error raised from C++

        try:
            tilelang.compile(bad, target="cpu")
        except TileLangError:
            pass
        try:
            tilelang.compile(f, target="cpu")(a, b)  # wrong argument count
        except TileLangError:
            pass
        print(f"round {r} ok", flush=True)
    gc.collect()


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _ours(root):
    """A frame of our code: our libraries by file name (unsymbolised frames), our namespace, or -- as
    symbolised frames show only the source file (the bindings' lambdas are in no namespace) -- a source
    file of this checkout's src/ or include/."""
    srcs = "|".join(re.escape(os.path.join(root, d) + os.sep) for d in ("src", "include"))
    return re.compile(r"libtilelang_core|/_ffi[.a-z0-9_-]*\.so|tilelang::|\btl::|" + srcs)


def check_report(text, root=ROOT):
    """The leak blocks of an LSan report whose stacks pass through our code."""
    ours = _ours(root)
    blocks = re.split(r"\n(?=(?:Direct|Indirect) leak of )", text)
    return [b for b in blocks if re.match(r"(Direct|Indirect) leak of ", b) and ours.search(b)]


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--workload":
        workload()
        return 0
    prefix = os.environ.get("LSAN_REPORT_PREFIX")
    env = dict(os.environ)
    if prefix:  # leak checking for the workload only (this process is a bare interpreter)
        opts = [o for o in env.get("ASAN_OPTIONS", "").split(":") if o and not o.startswith(("detect_leaks=", "log_path="))]
        # exitcode=23: under ASan a leak report exits 1 (ASan's exitcode), like any other failure; LSan's 23
        # tells the two apart
        opts = [o for o in opts if not o.startswith("exitcode=")]
        env["ASAN_OPTIONS"] = ":".join(opts + ["detect_leaks=1", "exitcode=23", f"log_path={prefix}"])
    env["TILELANG_NB_LEAK_WARNINGS"] = "1"  # nanobind's list of objects alive at exit (off for users)
    proc = subprocess.run([sys.executable] + (["-S"] if sys.flags.no_site else []) + [__file__, "--workload"],
                          capture_output=True, text=True, env=env)
    sys.stdout.write(proc.stdout)
    reports = []
    if prefix:
        d = os.path.dirname(prefix) or "."
        for name in sorted(os.listdir(d)):
            if name.startswith(os.path.basename(prefix) + "."):
                with open(os.path.join(d, name)) as fh:
                    reports.append(fh.read())
    if proc.returncode not in (0, 23):  # 23: LSan found leaks (some may be CPython's; sorted below)
        sys.stderr.write(proc.stderr)
        for r in reports:
            sys.stderr.write(r[:20000])
        print(f"workload failed with exit code {proc.returncode}")
        return 1
    if "nanobind: leaked" in proc.stderr:
        sys.stderr.write(proc.stderr)
        print("nanobind reports objects still alive at exit")
        return 1
    ours = [b for r in reports for b in check_report(r)]
    for b in ours[:5]:
        print(b[:4000])
    print(f"{len(ours)} leak(s) through TileLang-C++ code" + ("" if prefix else " (no LSan report: not under LSan)"))
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main())

"""A compiled kernel's disk-cache entry as bytes, so it can travel to another machine.

The kernel disk cache stores each build in a directory named by its content key: the CPU target's
<cache>/<key>/{kernel.so, kernel.meta, kernel.cc}, the CUDA target's <cache>/cuda/<key>/{kernel.cubin,
kernel.ptx, kernel.log, kernel.compiler, kernel.meta}; the meta names the key and hashes the rest (one
format for every backend: runtime/cache_util.h, CacheEntry). pack() reads the entry a kernel was built into; unpack() writes it into another cache under the same key (meta
last, each file atomically), after which the ordinary build path of the same function finds a valid entry
and loads it without running a compiler. Nothing here re-derives the key or bypasses the cache's own
validity checks: an entry that does not match what the receiving side computes is simply not found there
(then that side compiles, and the kernel's from_cache says so).
"""
import os
import re
import tempfile

from .. import _ffi
from ..errors import TileLangUnsupportedError

_CPU_FILES = ("kernel.so", "kernel.cc", "kernel.meta")
_CUDA_FILES = ("kernel.cubin", "kernel.ptx", "kernel.log", "kernel.compiler", "kernel.meta")
_ENTRY = re.compile(r"(cuda/)?[0-9a-f]{32}")


def cache_root():
    """The kernel cache directory this process builds into (the disk cache's one policy, in C++)."""
    return _ffi.cache_policy()[1]


def cache_enabled():
    return _ffi.cache_policy()[0]


def pack(kernel):
    """{"entry": "<key>" or "cuda/<key>", "files": {name: bytes}} of the cache entry `kernel` was built
    into, or None when nothing was compiled (the CUDA emulator runs the lowered IR, rebuilt anywhere)."""
    if not cache_enabled():
        raise TileLangUnsupportedError("executor='ray' ships compiled kernels through the kernel disk cache, but "
                                       "TILELANG_DISABLE_CACHE is set on this worker; unset it")
    compiled = kernel.compiled
    if kernel.kind == "cpu":
        entry_dir = os.path.dirname(compiled.binary_path)
        names = _CPU_FILES
    elif kernel.kind == "cuda":
        if kernel.execution_backend == "emulator":
            return None
        entry_dir = os.path.dirname(compiled.binary_path) if compiled.binary_path else \
            _find_cuda_entry(bytes(compiled.binary))
        names = _CUDA_FILES
    else:
        raise TileLangUnsupportedError(f"executor='ray' cannot ship kernels of target '{kernel.kind}'")
    root = os.path.realpath(cache_root())
    entry = os.path.relpath(os.path.realpath(entry_dir), root)
    if not _ENTRY.fullmatch(entry):
        raise TileLangUnsupportedError(f"the kernel was not built into the cache {root} (found {entry_dir})")
    files = {}
    for name in names:
        with open(os.path.join(entry_dir, name), "rb") as f:
            files[name] = f.read()
    return {"entry": entry, "files": files}


def _find_cuda_entry(cubin):
    # The entry is <cache>/cuda/<key>; its meta (runtime/cache_util.h, CacheEntry) names the key and each
    # file's size and hash: "key <key>" and "kernel.cubin <bytes> <hash>" lines.
    base = os.path.join(cache_root(), "cuda")
    for key in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        d = os.path.join(base, key)
        try:
            with open(os.path.join(d, "kernel.meta")) as f:
                lines = [ln.split() for ln in f.read().splitlines()]
            if ["key", key] in lines and any(ln[:2] == ["kernel.cubin", str(len(cubin))] for ln in lines):
                with open(os.path.join(d, "kernel.cubin"), "rb") as f:
                    if f.read() == cubin:
                        return d
        except OSError:
            continue
    raise TileLangUnsupportedError(f"cannot find the CUDA kernel's entry in the cache {base}")


def unpack(artefact, root=None):
    """Writes a packed entry into the cache at `root` (default: this process's); returns its directory.
    An identical entry already there is left alone."""
    entry, files = artefact["entry"], artefact["files"]
    allowed = _CUDA_FILES if entry.startswith("cuda/") else _CPU_FILES
    if not _ENTRY.fullmatch(entry) or set(files) != set(allowed):
        raise TileLangUnsupportedError(f"not a kernel cache entry: {entry!r} with files {sorted(files)}")
    d = os.path.join(root or cache_root(), entry)
    try:
        with open(os.path.join(d, "kernel.meta"), "rb") as f:
            if f.read() == files["kernel.meta"]:
                return d
    except OSError:
        pass
    os.makedirs(d, exist_ok=True)
    # the meta goes last: until it is in place, a reader sees an invalid entry and builds it itself
    for name in sorted(files, key=lambda n: n == "kernel.meta"):
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{name}.")
        with os.fdopen(fd, "wb") as f:
            f.write(files[name])
        os.replace(tmp, os.path.join(d, name))
    return d

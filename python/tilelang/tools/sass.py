"""SASS of a cubin, through cuobjdump: the toolkit's on PATH or under $CUDA_HOME, else the one PyPI's
nvidia-cuda-cuobjdump wheel installs (the package's `[sass]` extra)."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from ..errors import TileLangUnsupportedError


def find_cuobjdump():
    p = shutil.which("cuobjdump")
    if p:
        return p
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    candidates = [os.path.join(home, "bin", "cuobjdump")] if home else []
    candidates += glob.glob(os.path.join(sys.prefix, "lib", "python*", "site-packages", "nvidia", "*", "bin",
                                         "cuobjdump"))
    # the PyPI wheels on the import path too (an environment given by PYTHONPATH, e.g. under `python -S`)
    for entry in sys.path:
        if entry:
            candidates += glob.glob(os.path.join(entry, "nvidia", "*", "bin", "cuobjdump"))
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def disassemble(cubin):
    """SASS text of the cubin (bytes)."""
    tool = find_cuobjdump()
    if tool is None:
        raise TileLangUnsupportedError("SASS needs cuobjdump: install the CUDA toolkit, or "
                                       "`pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm` (the [sass] extra)")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        env = dict(os.environ)
        env["PATH"] = os.path.dirname(tool) + os.pathsep + env.get("PATH", "")  # its nvdisasm beside it
        r = subprocess.run([tool, "-sass", path], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise TileLangUnsupportedError(f"cuobjdump failed on the cubin: {r.stderr.strip()}")
    return r.stdout

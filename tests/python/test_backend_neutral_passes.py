"""The shared GPU passes read what the hardware offers (GpuFeatures, src/target/gpu_features.h), never which
backend they serve (issue 33, item 1): no file of src/transform tests a backend's identity (a backend's own
passes and op lowerings live in src/target/<kind>/, and the shared lowering finds those by the target's kind in
a registry, never by comparing it), and the HIP, Metal and OpenCL backends do not build their lowering on the
CUDA target."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
KINDS = ["cpu", "cuda", "hip", "metal", "opencl"]

# An identity test: the old CudaTarget flags that named a backend (mfma, simdgroup, subgroups, backend),
# its NVIDIA-only fields read as switches (sm, mma, cp_async), a comparison of a backend's or an
# architecture's name, or the CUDA target type itself.
IDENTITY = [
    (r"\.(mfma|simdgroup|subgroups|backend)\b", "a backend flag"),
    (r"(?<!tl)\.(sm|mma|cp_async)\b", "an NVIDIA target field read as a switch"),
    (r"\b(features|target)_?\.(name|label|arch)\s*[!=]=|\bbackend\s*[!=]=", "a comparison of the target's name"),
    (r"\"(CUDA|HIP|Metal|OpenCL|sm_\d+a?|gfx\d+a?)\"\s*[!=]=|[!=]=\s*\"(CUDA|HIP|Metal|OpenCL|sm_\d+a?|gfx\d+a?)\"",
     "a comparison with a backend's or an architecture's name"),
    (r"\bCudaTarget\b|target/cuda/target\.h", "the CUDA target"),
    (r"\btarget_?\.kind\s*[!=]=|[!=]=\s*\w*target_?\.kind\b|\"(cpu|cuda|hip|metal|opencl)\"",
     "a test of the target's kind"),
]


def _code(path):
    """The file without its comments (a comment may name a backend)."""
    text = path.read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return [re.sub(r"//.*", "", line) for line in text.splitlines()]


def _shared_pass_files():
    for p in sorted((SRC / "transform").rglob("*")):
        if p.suffix in (".cc", ".h"):
            yield p


def test_no_backend_folder_inside_the_shared_passes():
    """A backend's own passes and lowerings are in src/target/<kind>/ (src/transform/gpu/ is the shared GPU
    lowering, src/transform/cpu/ the loop-nest lowering the CPU target and the GPU legalization share)."""
    own = [k for k in KINDS if k != "cpu" and (SRC / "transform" / k).exists()]
    assert not own, f"backend folders inside src/transform: {own}"


def test_shared_passes_exist():
    files = [p.relative_to(SRC).as_posix() for p in _shared_pass_files()]
    assert "transform/legalize_tile_ops_gpu.cc" in files and "transform/gpu/lower_gemm.cc" in files


@pytest.mark.parametrize("pattern,what", IDENTITY, ids=[w for _, w in IDENTITY])
def test_no_shared_pass_tests_a_backend_identity(pattern, what):
    hits = []
    for p in _shared_pass_files():
        for i, line in enumerate(_code(p), 1):
            if re.search(pattern, line):
                hits.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not hits, f"{what} in a shared pass (read a GpuFeatures field instead):\n" + "\n".join(hits)


@pytest.mark.parametrize("kind", ["hip", "metal", "opencl"])
def test_backend_does_not_lower_on_the_cuda_target(kind):
    hits = []
    for p in sorted((SRC / "target" / kind).glob("*")):
        for i, line in enumerate(_code(p), 1):
            if re.search(r"\bCudaTarget\b|target/cuda/target\.h|ParseCudaTarget|LowerForCUDA\b", line):
                hits.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not hits, f"the {kind} backend builds on the CUDA target:\n" + "\n".join(hits)

"""TileLang's tilelang.contrib: the CUDA toolchain queries its programs use (tilelang.contrib.nvcc)."""

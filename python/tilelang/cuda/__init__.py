"""TileLang's `tilelang.cuda` package path: the parts of it TileLang's examples import (`tilelang.cuda.intrinsics`:
the shared-memory swizzles and mma fragment index maps). The CUDA backend itself lives in C++ (src/target/cuda/)."""

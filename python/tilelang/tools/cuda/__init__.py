"""TileLang's CUDA tools (tilelang.tools.cuda.iket)."""

"""A roller hint: one recommended tiling of an operator (TileLang's field names, so that programs reading
``hint.block``, ``hint.warp``, ``hint.rstep``, ``hint.pipeline_stage``, ``hint.rasterization_plan`` work)."""
from .rasterization import NoRasterization


class IntrinInfo:
    """The tensor-core operand types of a hint."""

    def __init__(self, in_dtype, out_dtype, trans_b=True, input_transform_kind=0, weight_transform_kind=0):
        self.in_dtype, self.out_dtype = str(in_dtype), str(out_dtype)
        self.trans_a, self.trans_b = False, bool(trans_b)
        self.input_transform_kind, self.weight_transform_kind = input_transform_kind, weight_transform_kind

    def __repr__(self):
        return f"<IntrinInfo {self.in_dtype} -> {self.out_dtype}, trans_b={self.trans_b}>"


class Hint:
    """block: the block's output tile [M, N]; warp: one warp's output tile; rstep: [block_K];
    pipeline_stage: shared-memory stages; use_async: cp.async copies; rasterization_plan: block order.
    threads / smem_bytes / score are this roller's own figures for the choice."""

    def __init__(self):
        self.arch = None
        self.use_tc = True
        self.block = []
        self.thread = []
        self.warp = []
        self.rstep = []
        self.reduce_thread = []
        self.rasterization_plan = NoRasterization()
        self.cached_tensors = []
        self.output_strides = {}
        self.schedule_stages = None
        self.block_reduction_depth = None
        self.pipeline_stage = 1
        self.use_async = False
        self.intrin_info = IntrinInfo("float16", "float16", True)
        self.threads = 0
        self.smem_bytes = 0
        self.score = 0.0

    def to_dict(self):
        return {"block": list(self.block), "warp": list(self.warp), "rstep": list(self.rstep),
                "pipeline_stage": self.pipeline_stage, "use_async": self.use_async,
                "rasterization_plan": repr(self.rasterization_plan), "threads": self.threads,
                "smem_bytes": self.smem_bytes}

    def __repr__(self):
        return ("{" + f"'block': {self.block}, 'warp': {self.warp}, 'rstep': {self.rstep}, "
                f"'pipeline_stage': {self.pipeline_stage}, 'rasterization_plan': {self.rasterization_plan!r}" + "}")

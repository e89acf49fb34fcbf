"""Block rasterisation plans a roller hint carries (TileLang's names): which order the blocks of a 2-D grid
are visited in, for L2 reuse. A kernel applies one with ``T.use_swizzle(panel_size=plan.panel_width)``."""


class Rasterization:
    panel_width_ = None

    def get_code(self):
        """TileLang emits CUDA snippets here; this compiler rasterises with T.use_swizzle instead."""
        return []

    @property
    def panel_width(self):
        if self.panel_width_ is None:
            raise ValueError(f"{self!r} has no panel width")
        return self.panel_width_

    def __eq__(self, other):
        return type(self) is type(other) and self.panel_width_ == other.panel_width_

    def __hash__(self):
        return hash((type(self).__name__, self.panel_width_))


class NoRasterization(Rasterization):
    """Blocks in launch order."""

    def __repr__(self):
        return "<NoRasterization>"


class Rasterization2DRow(Rasterization):
    """Rows of blocks visited in panels panel_width blocks tall."""

    def __init__(self, panel_width=4):
        self.panel_width_ = int(panel_width)

    def __repr__(self):
        return f"<Rasterization2DRow({self.panel_width_})>"


class Rasterization2DColumn(Rasterization):
    """Columns of blocks visited in panels panel_width blocks wide."""

    def __init__(self, panel_width=4):
        self.panel_width_ = int(panel_width)

    def __repr__(self):
        return f"<Rasterization2DColumn({self.panel_width_})>"

"""set_autotune_inputs: the tensors the candidates are checked and timed on, instead of generated ones.

    with set_autotune_inputs(q, k, v):   # or set_autotune_inputs([q, k, v])
        kernel = tuned_factory(...)

The tensors are the kernel's inputs in parameter order (its out_idx outputs excluded), as the profiler's
make_inputs() would give them."""

_stack = []


class AutotuneInputsCapture:
    def __init__(self, tensors):
        self.tensors = list(tensors)

    def __enter__(self):
        _stack.append(self.tensors)
        return self

    def __exit__(self, *exc):
        _stack.pop()
        return False


def set_autotune_inputs(*args):
    tensors = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    return AutotuneInputsCapture(tensors)


def get_autotune_inputs():
    """The innermost set_autotune_inputs' tensors, or None."""
    return _stack[-1] if _stack else None

"""tilelang.math: integer helpers TileLang programs use when choosing tile sizes."""


def cdiv(a, b):
    """Ceiling division of Python ints (for IR expressions, T.ceildiv)."""
    if not hasattr(a, "__index__") or not hasattr(b, "__index__"):
        from .language import ceildiv

        return ceildiv(a, b)
    return -(-int(a) // int(b))


def next_power_of_2(n):
    """The smallest power of two >= n (1 for n <= 1)."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def prev_power_of_2(n):
    """The largest power of two <= n (n >= 1)."""
    n = int(n)
    if n < 1:
        raise ValueError(f"prev_power_of_2 needs n >= 1, got {n}")
    return 1 << (n.bit_length() - 1)

"""The online-softmax step every attention kernel of the zoo takes per key tile, as a T.macro: with S the tile's
raw scores [rows, cols], m / l the running row maximum and sum (base 2, `scale` folding in 1/sqrt(d) * log2 e)
and acc the output accumulator, it leaves S = exp2((S - m) * scale), l and acc rescaled to the new maximum.
`empty_rows`: a row may have only -inf scores so far (a query that sees no key yet): its rescale is 1 and its
probabilities 0, instead of NaN."""
import tilelang.language as T


@T.macro
def online_softmax(S, m, m_prev, rescale, row_sum, l, acc, scale, empty_rows=False):
    rows, cols = S.shape
    T.copy(m, m_prev)
    T.reduce_max(S, m, dim=1, clear=False)
    for i in T.Parallel(rows):
        if empty_rows:
            rescale[i] = T.if_then_else(m[i] == -T.infinity("float32"), 1.0, T.exp2((m_prev[i] - m[i]) * scale))
        else:
            rescale[i] = T.exp2((m_prev[i] - m[i]) * scale)
    for i, j in T.Parallel(rows, cols):
        if empty_rows:
            S[i, j] = T.if_then_else(m[i] == -T.infinity("float32"), 0.0, T.exp2((S[i, j] - m[i]) * scale))
        else:
            S[i, j] = T.exp2((S[i, j] - m[i]) * scale)
    T.reduce_sum(S, row_sum, dim=1)
    for i in T.Parallel(rows):
        l[i] = l[i] * rescale[i] + row_sum[i]
    for i, j in T.Parallel(rows, acc.shape[1]):
        acc[i, j] *= rescale[i]

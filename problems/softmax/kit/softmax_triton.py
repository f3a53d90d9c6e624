"""The online-softmax Triton kernel shared by the deck's Triton softmax solutions
(solutions/triton-softmax, which launches it with a fixed configuration per shape, and
solutions/triton-softmax-autotune, which wraps it in triton.autotune). kbench copies this file
beside each solution's own files (the problem kit), so a solution reads it with a plain
`import softmax_triton`.

softmax_rows: one program per row of a (batch, vocab) fp32 tensor, BLOCK lanes per step, two
passes over the row: the first keeps a per-lane running maximum and a sum rescaled to it (the
online softmax), the second writes exp(x - max) / sum.
"""
import triton
import triton.language as tl

# Masked lanes load this finite stand-in for -inf: exp() of it minus any real maximum is 0, and it
# never makes the inf - inf = nan that a true -inf would in the rescaling factor. A constexpr: a
# jitted function may read only constexpr globals (of the module it is defined in, this one).
_MASKED = tl.constexpr(-3.0e38)


@triton.jit
def softmax_rows(x_ptr, y_ptr, vocab, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * vocab
    y_row = y_ptr + row * vocab
    lanes = tl.arange(0, BLOCK)
    run_max = tl.full([BLOCK], _MASKED, tl.float32)
    run_sum = tl.zeros([BLOCK], tl.float32)
    for start in range(0, vocab, BLOCK):
        offs = start + lanes
        x = tl.load(x_row + offs, mask=offs < vocab, other=_MASKED)
        new_max = tl.maximum(run_max, x)
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.exp(x - new_max)
        run_max = new_max
    row_max = tl.max(run_max, axis=0)
    row_sum = tl.sum(run_sum * tl.exp(run_max - row_max), axis=0)
    inv_sum = 1.0 / row_sum
    for start in range(0, vocab, BLOCK):
        offs = start + lanes
        mask = offs < vocab
        x = tl.load(x_row + offs, mask=mask, other=_MASKED)
        tl.store(y_row + offs, tl.exp(x - row_max) * inv_sum, mask=mask)

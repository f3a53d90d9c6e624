"""Row-wise softmax as one Triton kernel whose block size and warp count Triton's autotuner picks
(docs/python-solutions.md): an honest solution that tunes itself, on the cuda target.

The kernel is triton-softmax's online softmax (one program per row, two passes). @triton.autotune
times each configuration on the shape's first launch, keyed by the row length, and keeps the
fastest for every later launch with that key. That first launch happens in setup, on scratch
tensors of the shape's size: the autotuner's compilations and timings are setup's (untimed), and
run only launches the configuration already chosen. A compilation inside run would be killed by
the worker's system-call filter.
"""
import torch
import triton
import triton.language as tl

# A finite stand-in for -inf on masked lanes (see triton-softmax): exp() of it minus a real
# maximum is 0, and it never makes inf - inf.
_MASKED = tl.constexpr(-3.0e38)


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 2048}, num_warps=8),
        triton.Config({"BLOCK": 4096}, num_warps=8),
        triton.Config({"BLOCK": 4096}, num_warps=16),
    ],
    key=["vocab"],
)
@triton.jit
def _softmax_rows(x_ptr, y_ptr, vocab, BLOCK: tl.constexpr):
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


def setup(problem):
    batch, vocab = problem.dims["batch"], problem.dims["vocab"]
    # Tune and compile now: the autotuner's choice for this vocab is kept for run's launches.
    x = torch.randn((batch, vocab), device=problem.device, dtype=torch.float32)
    y = torch.empty_like(x)
    _softmax_rows[(batch,)](x, y, vocab)
    torch.cuda.synchronize()
    return {"batch": batch, "vocab": vocab}


def run(state, inputs, outputs):
    # On the current stream: kbench's, made current around this call by the bridge.
    _softmax_rows[(state["batch"],)](inputs[0], outputs[0], state["vocab"])

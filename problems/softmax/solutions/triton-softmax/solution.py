"""Row-wise softmax as one Triton kernel (docs/python-solutions.md), an honest solution of the
example problem on the cuda target.

One program per row, two passes over it: the first keeps a per-lane running maximum and a sum
rescaled to it (the online softmax), the second writes exp(x - max) / sum. The configuration is
fixed per shape and the kernel is compiled in setup by one launch on scratch tensors of the
shape's size: a first launch inside run would JIT-compile there, after the worker's system-call
filter is on, and its ptxas subprocess would be killed.
"""
import torch
import triton
import triton.language as tl

# Masked lanes load this finite stand-in for -inf: exp() of it minus any real maximum is 0, and it
# never makes the inf - inf = nan that a true -inf would in the rescaling factor. A constexpr: a
# jitted function may read only constexpr globals.
_MASKED = tl.constexpr(-3.0e38)


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


def _config(vocab):
    # Up to 4096 fp32 lanes per step (16 KiB of a row in flight per program), 8 warps from 2048 on.
    block = min(triton.next_power_of_2(vocab), 4096)
    return block, (8 if block >= 2048 else 4)


def _launch(x, y, state):
    _softmax_rows[(state["batch"],)](x, y, state["vocab"], BLOCK=state["block"], num_warps=state["warps"])


def setup(problem):
    batch, vocab = problem.dims["batch"], problem.dims["vocab"]
    block, warps = _config(vocab)
    state = {"batch": batch, "vocab": vocab, "block": block, "warps": warps}
    # Compile now, with arguments of the same kinds run passes (fp32 pointers, 256-byte aligned;
    # the same vocab), so that run finds the kernel compiled.
    x = torch.randn((batch, vocab), device=problem.device, dtype=torch.float32)
    y = torch.empty_like(x)
    _launch(x, y, state)
    torch.cuda.synchronize()
    return state


def run(state, inputs, outputs):
    # Launched on the current stream: kbench's, made current around this call by the bridge.
    _launch(inputs[0], outputs[0], state)

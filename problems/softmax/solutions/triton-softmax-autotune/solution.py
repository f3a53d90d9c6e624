"""Row-wise softmax as one Triton kernel whose block size and warp count Triton's autotuner picks
(docs/python-solutions.md): an honest solution that tunes itself, on the cuda target.

The kernel is the online softmax of the problem's kit (problems/softmax/kit/softmax_triton.py,
copied beside this file; triton-softmax launches it too): one program per row, two passes. This
solution wraps it in triton.autotune, which times each configuration on the shape's first launch,
keyed by the row length, and keeps the fastest for every later launch with that key. That first
launch happens in setup, on scratch tensors of the shape's size: the autotuner's compilations and
timings are setup's (untimed), and run only launches the configuration already chosen. A
compilation inside run would be killed by the worker's system-call filter.
"""
import torch
import triton

import softmax_triton

# The kit's kernel under Triton's autotuner: the Autotuner wraps the imported JIT function and
# picks BLOCK and num_warps per vocab.
_tuned = triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 2048}, num_warps=8),
        triton.Config({"BLOCK": 4096}, num_warps=8),
        triton.Config({"BLOCK": 4096}, num_warps=16),
    ],
    key=["vocab"],
)(softmax_triton.softmax_rows)


def setup(problem):
    batch, vocab = problem.dims["batch"], problem.dims["vocab"]
    # Tune and compile now: the autotuner's choice for this vocab is kept for run's launches.
    x = torch.randn((batch, vocab), device=problem.device, dtype=torch.float32)
    y = torch.empty_like(x)
    _tuned[(batch,)](x, y, vocab)
    torch.cuda.synchronize()
    return {"batch": batch, "vocab": vocab}


def run(state, inputs, outputs):
    # On the current stream: kbench's, made current around this call by the bridge.
    _tuned[(state["batch"],)](inputs[0], outputs[0], state["vocab"])

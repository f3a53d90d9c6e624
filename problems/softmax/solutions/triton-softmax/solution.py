"""Row-wise softmax as one Triton kernel (docs/python-solutions.md), an honest solution of the
example problem on the cuda target.

The kernel, softmax_rows, is in the problem's kit (problems/softmax/kit/softmax_triton.py, copied
beside this file): one program per row, two passes over it: the first keeps a per-lane running
maximum and a sum rescaled to it (the online softmax), the second writes exp(x - max) / sum. This
solution fixes its block size and warp count per shape and compiles the kernel in setup by one
launch on scratch tensors of the shape's size: a first launch inside run would JIT-compile there,
after the worker's system-call filter is on, and its ptxas subprocess would be killed.
"""
import torch
import triton

import softmax_triton


def _config(vocab):
    # Up to 4096 fp32 lanes per step (16 KiB of a row in flight per program), 8 warps from 2048 on.
    block = min(triton.next_power_of_2(vocab), 4096)
    return block, (8 if block >= 2048 else 4)


def _launch(x, y, state):
    softmax_triton.softmax_rows[(state["batch"],)](x, y, state["vocab"], BLOCK=state["block"],
                                                   num_warps=state["warps"])


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

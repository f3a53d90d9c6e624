"""Honest, and tricky to judge: the Triton softmax replayed from a CUDA graph that setup captures
(docs/python-solutions.md), the Python counterpart of solutions/cuda-graph-two-pass.

A graph fixes its kernels' arguments, and kbench hands run a different input set from call to
call, so the graph is captured on buffers of this solution's own (the usual PyTorch idiom: static
input and output tensors): run copies the input in, replays the graph on the current stream
(kbench's, made current by the bridge) and copies the result out. The copies are stream-ordered
device-to-device copies, not kernels; the graph's one kernel is the kit's softmax_rows, which
setup compiles before capturing it. kbench must attribute the replayed kernel to the solution,
time the call with its Python overhead (three launches from the interpreter instead of one Triton
launch) and pass it.
"""
import torch
import triton

import softmax_triton


def _launch(x, y, state):
    softmax_triton.softmax_rows[(state["batch"],)](x, y, state["vocab"], BLOCK=state["block"],
                                                   num_warps=state["warps"])


def setup(problem):
    batch, vocab = problem.dims["batch"], problem.dims["vocab"]
    block = min(triton.next_power_of_2(vocab), 4096)
    state = {"batch": batch, "vocab": vocab, "block": block, "warps": 8 if block >= 2048 else 4}
    x = torch.zeros((batch, vocab), device=problem.device, dtype=torch.float32)
    y = torch.empty_like(x)
    _launch(x, y, state)  # compiles the kernel: a capture records launches, it compiles nothing
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        _launch(x, y, state)
    torch.cuda.synchronize()
    state.update(graph=graph, x=x, y=y)
    return state


def run(state, inputs, outputs):
    state["x"].copy_(inputs[0])
    state["graph"].replay()
    outputs[0].copy_(state["y"])

"""Row-wise softmax in PyTorch, from elementwise ops and reductions (docs/python-solutions.md).

An honest Python solution of the example problem: it runs on the host target with CPU torch and on
the cuda target with CUDA torch alike (the tensors are on problem.device). Every call writes the
whole output tensor in place: `outputs[0]` aliases kbench's own buffer, so rebinding the name or
returning a new tensor would leave kbench's output unwritten.
"""
import torch


def setup(problem):
    # Nothing to prepare: softmax has no weights. The state is what run receives back.
    return {"batch": problem.dims["batch"], "vocab": problem.dims["vocab"]}


def run(state, inputs, outputs):
    x, y = inputs[0], outputs[0]
    # The row maximum keeps exp() in range; y holds x - max, then exp of it, then the quotient.
    row_max = torch.amax(x, dim=1, keepdim=True)
    torch.sub(x, row_max, out=y)
    torch.exp(y, out=y)
    row_sum = torch.sum(y, dim=1, keepdim=True)
    y.div_(row_sum)


def teardown(state):
    pass

"""Row-wise softmax split over two modules of the solution's own, with a module-global scratch
tensor made in setup and reused by every call: state kept across calls is honest as long as no
result is (docs/python-solutions.md)."""
import torch

import rowops

# Scratch for the row sums, sized in setup. A module global, not a cache: it holds no result.
_row_sum = None


def setup(problem):
    global _row_sum
    _row_sum = torch.empty((problem.dims["batch"], 1), dtype=torch.float32)
    return None


def run(state, inputs, outputs):
    x, y = inputs[0], outputs[0]
    rowops.subtract_row_max(x, out=y)
    torch.exp(y, out=y)
    rowops.normalise_rows(y, _row_sum)

"""The row reductions of the two-module softmax: a module of the solution's own, imported by
solution.py at import time (during setup, before the worker's system-call filter)."""
import torch


def subtract_row_max(x, out):
    torch.sub(x, torch.amax(x, dim=1, keepdim=True), out=out)


def normalise_rows(y, row_sum):
    torch.sum(y, dim=1, keepdim=True, out=row_sum)
    y.div_(row_sum)

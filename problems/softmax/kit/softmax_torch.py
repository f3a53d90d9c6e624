"""Softmax from torch's own elementwise and reduction operators, written into the output in place:
the honest part of the deck's Python exploits of softmax, each of which differs only in the cheat
around it (a kit module: offered to no agent; src/target/solution_kit.h). The row maximum keeps
exp() in range. python-torch keeps its own copy of these lines on purpose: it is the example
docs/python-solutions.md points users to, and it must run wherever it is copied, without a kit."""
import torch


def softmax_into(x, y):
    torch.sub(x, torch.amax(x, dim=1, keepdim=True), out=y)
    torch.exp(y, out=y)
    y.div_(torch.sum(y, dim=1, keepdim=True))

"""Imports an extension module lazily, inside run: loading its machine code maps executable memory
after setup, which the worker's W^X rule forbids (docs/python-solutions.md). The honest way is the
import at the top of the module (python-torch-two-modules)."""
import torch

import softmax_torch


def setup(problem):
    return None


def run(state, inputs, outputs):
    import sqlite3  # an extension module (_sqlite3) that nothing imported before

    x, y = inputs[0], outputs[0]
    softmax_torch.softmax_into(x, y)

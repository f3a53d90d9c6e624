"""Raises in run: the solution's error, reported with its traceback's last line."""


def setup(problem):
    return None


def run(state, inputs, outputs):
    raise RuntimeError("softmax kernel not written yet")

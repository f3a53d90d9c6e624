"""kbench's reference line for l3_vision_attention: PyTorch eager, attention by
torch.nn.functional.scaled_dot_product_attention. Timed and checked like a solution, never scored.

Computes, for x (B, C, H, W): the S = H W tokens t[b, s, :] = x[b, :, s // W, s % W];
nn.MultiheadAttention(C, NH) on them without a mask (q | k | v = t in_proj_weight^T + in_proj_bias,
per head softmax(q k^T / sqrt(C / NH)) v, heads concatenated, out_proj); y = LayerNorm(C)(a + t)
with gamma, beta, eps 1e-5; out[b, c, h, w] = y[b, h W + w, c].

problem.toml's tensors, in its order: input x; weights in_proj_weight (3C, C), in_proj_bias (3C),
out_proj_weight (C, C), out_proj_bias (C), gamma (C), beta (C); output out (B, C, H, W).

Why torch SDPA in fp32 and not cuDNN, and why the projections are fp32 SGEMMs: see the deck kit's
torch_baselines.py, which holds the code this line shares with the deck's other PyTorch baselines.
Requires torch >= 2.1 (SDPA's scale argument) on cuda; nothing version-specific runs at import, so
torch 1.13 imports it cleanly.
"""
import torch.nn.functional as F

import torch_baselines


def setup(problem):
    d = problem.dims
    w_in, b_in, w_out, b_out, gamma, beta = problem.weights
    state = {"B": d["B"], "C": d["C"], "S": d["H"] * d["W"], "NH": d["NH"],
             "w_in": w_in, "b_in": b_in, "w_out": w_out, "b_out": b_out, "gamma": gamma, "beta": beta}
    if problem.device == "cuda":
        torch_baselines.warm_up(run, state, (d["B"], d["C"], d["H"], d["W"]))
    return state


def run(state, inputs, outputs):
    B, C, S, NH = state["B"], state["C"], state["S"], state["NH"]
    t = inputs[0].view(B, C, S).transpose(1, 2)            # (B, S, C) tokens, a view of x
    qkv = F.linear(t, state["w_in"], state["b_in"])        # (B, S, 3C), q | k | v
    y = torch_baselines.packed_attention(qkv, B, S, NH, is_causal=False)  # (B S, C)
    a = F.linear(y, state["w_out"], state["b_out"]).view(B, S, C)
    a += t                                                  # the residual
    y = F.layer_norm(a, (C,), state["gamma"], state["beta"], 1e-5)
    outputs[0].view(B, C, S).copy_(y.transpose(1, 2))      # tokens back to (B, C, H, W), in place

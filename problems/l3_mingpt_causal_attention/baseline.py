"""kbench's reference line for l3_mingpt_causal_attention: PyTorch eager, attention by
torch.nn.functional.scaled_dot_product_attention. Timed and checked like a solution, never scored.

Computes minGPT's CausalSelfAttention (dropout 0) for x (B, T, C): q | k | v = x c_attn_weight^T +
c_attn_bias, NH heads of C / NH, per head softmax(q k^T / sqrt(C / NH)) with token t seeing tokens
0..t, times v; heads concatenated per token; out = y c_proj_weight^T + c_proj_bias.

problem.toml's tensors, in its order: input x (B, T, C); weights c_attn_weight (3C, C),
c_attn_bias (3C), c_proj_weight (C, C), c_proj_bias (C); output out (B, T, C).

Why torch SDPA in fp32 and not cuDNN, and why the projections are fp32 SGEMMs: see the deck kit's
torch_baselines.py, which holds the code this line shares with the deck's other PyTorch baselines.
is_causal=True is minGPT's tril mask (query t sees keys 0..t; SDPA aligns it top-left, and here
the query and key lengths are equal). Requires torch >= 2.1 (SDPA's scale argument) on cuda;
nothing version-specific runs at import, so torch 1.13 imports it cleanly.
"""
import torch
import torch.nn.functional as F

import torch_baselines


def setup(problem):
    d = problem.dims
    w_attn, b_attn, w_proj, b_proj = problem.weights
    state = {"B": d["B"], "T": d["T"], "C": d["C"], "NH": d["NH"],
             "w_attn": w_attn, "b_attn": b_attn, "w_proj_t": w_proj.t(), "b_proj": b_proj}
    if problem.device == "cuda":
        torch_baselines.warm_up(run, state, (d["B"], d["T"], d["C"]))
    return state


def run(state, inputs, outputs):
    B, T, C, NH = state["B"], state["T"], state["C"], state["NH"]
    qkv = F.linear(inputs[0], state["w_attn"], state["b_attn"])     # (B, T, 3C)
    # q | k | v as c_attn(x).split(C, dim=2), heads as view(B, T, NH, hd): views of qkv, no copy.
    y = torch_baselines.packed_attention(qkv, B, T, NH, is_causal=True)  # (B T, C)
    # c_proj straight into kbench's buffer (the bias as cuBLASLt's epilogue).
    torch.addmm(state["b_proj"], y, state["w_proj_t"], out=outputs[0].view(B * T, C))

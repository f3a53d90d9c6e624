"""kbench's reference line for l4_grouped_query_attention: PyTorch eager, attention by
torch.nn.functional.scaled_dot_product_attention. Timed and checked like a solution, never scored.

Computes Llama-style grouped-query attention without biases for x (B, T, C): q = x q_proj^T (HQ
heads of D), k = x k_proj^T and v = x v_proj^T (HKV heads of D); rotate-half RoPE on q and k at
positions 0..T-1 (pair (i, i + D/2) turned by t * 10000^(-2i/D)); query head h reads kv head
h // (HQ / HKV); per head softmax(q k^T / sqrt(D)) with token t seeing tokens 0..t, times v; heads
concatenated per token; out = attn o_proj^T.

problem.toml's tensors, in its order: input x (B, T, C); weights q_proj_weight (HQ D, C),
k_proj_weight (HKV D, C), v_proj_weight (HKV D, C), o_proj_weight (C, HQ D); output out (B, T, C).

Why torch SDPA in fp32 and not cuDNN, and why the projections are fp32 SGEMMs: see the deck kit's
torch_baselines.py, which holds the code this line shares with the deck's other PyTorch baselines
(RoPE among it). Requires torch >= 2.1 (SDPA's scale argument) on cuda; nothing version-specific
runs at import, so torch 1.13 imports it cleanly.

Grouped heads: k and v are expanded to HQ heads with repeat_interleave (Llama's repeat_kv; query
head h then reads kv head h // (HQ / HKV), the oracle's mapping), not passed with enable_gqa=True:
up to torch 2.11 the memory-efficient backend refuses unequal head counts (sdp_utils.cpp), so an
fp32 enable_gqa call falls back to the math backend, which materialises every T x T score.
(pytorch/pytorch PR #191085, 2026-07, after 2.11, adds GQA to the memory-efficient kernel;
facebookresearch/sapiens2 PR #3 keeps fp32 on repeat_interleave on torch 2.11 for this reason.)
The copies cost 2 B T HQ D floats of writes, small beside the attention.
"""
import math

import torch
import torch.nn.functional as F

import torch_baselines


def setup(problem):
    d = problem.dims
    wq, wk, wv, wo = problem.weights
    # One GEMM for q | k | v (weights never change; the concatenation is untimed setup work).
    state = {"B": d["B"], "T": d["T"], "C": d["C"], "HQ": d["HQ"], "HKV": d["HKV"], "D": d["D"],
             "w_qkv": torch.cat((wq, wk, wv), dim=0), "wo_t": wo.t()}
    # RoPE's cos and sin per (position, frequency), from angles in double (the oracle's exact
    # angles, as prompt.md suggests), as (T, 1, D/2) fp32 tables.
    state["cos"], state["sin"] = torch_baselines.rope_tables(d["T"], d["D"], problem.device)
    if problem.device == "cuda":
        torch_baselines.warm_up(run, state, (d["B"], d["T"], d["C"]))
    return state


def run(state, inputs, outputs):
    B, T, C, HQ, HKV, D = state["B"], state["T"], state["C"], state["HQ"], state["HKV"], state["D"]
    qkv = F.linear(inputs[0], state["w_qkv"]).view(B, T, HQ + 2 * HKV, D)
    # RoPE on q and k together: (B, T, HQ + HKV, D).
    qk = torch_baselines.rope(qkv[:, :, :HQ + HKV], state["cos"], state["sin"])
    group = HQ // HKV
    # Heads stay token-major (B, T, heads, D); SDPA gets (B, heads, T, D) views of them.
    q = qk[:, :, :HQ].transpose(1, 2)
    k = qk[:, :, HQ:].repeat_interleave(group, dim=2).transpose(1, 2)
    v = qkv[:, :, HQ + HKV:].repeat_interleave(group, dim=2).transpose(1, 2)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0 / math.sqrt(D))
    torch.mm(torch_baselines.merge_heads(y), state["wo_t"], out=outputs[0].view(B * T, C))

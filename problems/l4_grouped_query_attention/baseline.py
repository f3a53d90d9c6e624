"""kbench's reference line for l4_grouped_query_attention: PyTorch eager, attention by
torch.nn.functional.scaled_dot_product_attention. Timed and checked like a solution, never scored.

Computes Llama-style grouped-query attention without biases for x (B, T, C): q = x q_proj^T (HQ
heads of D), k = x k_proj^T and v = x v_proj^T (HKV heads of D); rotate-half RoPE on q and k at
positions 0..T-1 (pair (i, i + D/2) turned by t * 10000^(-2i/D)); query head h reads kv head
h // (HQ / HKV); per head softmax(q k^T / sqrt(D)) with token t seeing tokens 0..t, times v; heads
concatenated per token; out = attn o_proj^T.

problem.toml's tensors, in its order: input x (B, T, C); weights q_proj_weight (HQ D, C),
k_proj_weight (HKV D, C), v_proj_weight (HKV D, C), o_proj_weight (C, HQ D); output out (B, T, C).

Why torch SDPA in fp32 and not cuDNN: the problem is fp32 throughout, and cuDNN's fused attention
and FlashAttention take fp16/bf16 only (torch's dispatcher, aten/src/ATen/native/transformers/cuda/
sdp_utils.cpp of github:pytorch/pytorch: can_use_cudnn_attention and can_use_flash_attention both
require check_dtypes_low_precision, {Half, BFloat16} on sm80+). For fp32 CUDA tensors SDPA runs
torch's memory-efficient kernel (CUTLASS, from xformers), whose products on sm80+ are 3xTF32
(cutlass::arch::OpMultiplyAddFastF32, mem_eff_attention/gemm_kernel_utils.h): fp32-accurate.
The projections are cuBLAS SGEMMs in full fp32: torch's default float32 matmul precision is
"highest" (no TF32), and this file does not change it. Requires torch >= 2.1 (SDPA's scale
argument) on cuda; nothing version-specific runs at import, so torch 1.13 imports it cleanly.

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

ROPE_BASE = 10000.0


def setup(problem):
    d = problem.dims
    wq, wk, wv, wo = problem.weights
    # One GEMM for q | k | v (weights never change; the concatenation is untimed setup work).
    state = {"B": d["B"], "T": d["T"], "C": d["C"], "HQ": d["HQ"], "HKV": d["HKV"], "D": d["D"],
             "w_qkv": torch.cat((wq, wk, wv), dim=0), "wo_t": wo.t()}
    # RoPE's cos and sin per (position, frequency), from angles in double (the oracle's exact
    # angles, as prompt.md suggests; fp32 angles are ~1e-4 rad off at t = 2047), stored in fp32
    # as (T, 1, D/2) to broadcast over batch and heads.
    state["cos"], state["sin"] = _rope_tables(d["T"], d["D"], problem.device)
    if problem.device == "cuda":
        _warm_up(problem, state)
    return state


def run(state, inputs, outputs):
    B, T, C, HQ, HKV, D = state["B"], state["T"], state["C"], state["HQ"], state["HKV"], state["D"]
    qkv = F.linear(inputs[0], state["w_qkv"]).view(B, T, HQ + 2 * HKV, D)
    qk = _rope(qkv[:, :, :HQ + HKV], state["cos"], state["sin"])   # (B, T, HQ + HKV, D)
    group = HQ // HKV
    # Heads stay token-major (B, T, heads, D); SDPA gets (B, heads, T, D) views of them.
    q = qk[:, :, :HQ].transpose(1, 2)
    k = qk[:, :, HQ:].repeat_interleave(group, dim=2).transpose(1, 2)
    v = qkv[:, :, HQ + HKV:].repeat_interleave(group, dim=2).transpose(1, 2)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0 / math.sqrt(D))
    torch.mm(y.transpose(1, 2).reshape(B * T, HQ * D), state["wo_t"], out=outputs[0].view(B * T, C))


def _rope_tables(T, D, device):
    half = D // 2
    inv_freq = ROPE_BASE ** (-2.0 * torch.arange(half, dtype=torch.float64) / D)
    angles = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq[None, :]
    as_table = lambda t: t.to(torch.float32).view(T, 1, half).to(device)
    return as_table(torch.cos(angles)), as_table(torch.sin(angles))


def _rope(x, cos, sin):
    # Rotate-half RoPE of x (B, T, heads, D) into a new contiguous tensor: the pair (x1[i], x2[i])
    # of the two halves becomes (x1 cos - x2 sin, x2 cos + x1 sin); four elementwise kernels.
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    o1, o2 = out[..., :half], out[..., half:]
    torch.mul(x1, cos, out=o1)
    o1.addcmul_(x2, sin, value=-1.0)
    torch.mul(x2, cos, out=o2)
    o2.addcmul_(x1, sin)
    return out


def _warm_up(problem, state):
    # One call at the shape's size, untimed: torch's lazy CUDA state (cuBLAS handles, the fused
    # kernel's first launch, allocator blocks) stays out of the timed calls. Run with only the
    # memory-efficient backend allowed, so that setup fails loudly if these inputs would send SDPA
    # to its math fallback (the full T x T scores) instead of the fused fp32 kernel this line claims.
    from torch.nn.attention import SDPBackend, sdpa_kernel
    d = problem.dims
    x = torch.randn((d["B"], d["T"], d["C"]), device="cuda", dtype=torch.float32)
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
        run(state, [x], [torch.empty_like(x)])
    torch.cuda.synchronize()

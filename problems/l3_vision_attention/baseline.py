"""kbench's reference line for l3_vision_attention: PyTorch eager, attention by
torch.nn.functional.scaled_dot_product_attention. Timed and checked like a solution, never scored.

Computes, for x (B, C, H, W): the S = H W tokens t[b, s, :] = x[b, :, s // W, s % W];
nn.MultiheadAttention(C, NH) on them without a mask (q | k | v = t in_proj_weight^T + in_proj_bias,
per head softmax(q k^T / sqrt(C / NH)) v, heads concatenated, out_proj); y = LayerNorm(C)(a + t)
with gamma, beta, eps 1e-5; out[b, c, h, w] = y[b, h W + w, c].

problem.toml's tensors, in its order: input x; weights in_proj_weight (3C, C), in_proj_bias (3C),
out_proj_weight (C, C), out_proj_bias (C), gamma (C), beta (C); output out (B, C, H, W).

Why torch SDPA in fp32 and not cuDNN: the problem is fp32 throughout, and cuDNN's fused attention
and FlashAttention take fp16/bf16 only (torch's dispatcher, aten/src/ATen/native/transformers/cuda/
sdp_utils.cpp of github:pytorch/pytorch: can_use_cudnn_attention and can_use_flash_attention both
require check_dtypes_low_precision, {Half, BFloat16} on sm80+). For fp32 CUDA tensors SDPA runs
torch's memory-efficient kernel (CUTLASS, from xformers), whose products on sm80+ are 3xTF32
(cutlass::arch::OpMultiplyAddFastF32, mem_eff_attention/gemm_kernel_utils.h): fp32-accurate.
The projections are cuBLAS SGEMMs in full fp32: torch's default float32 matmul precision is
"highest" (no TF32), and this file does not change it. Requires torch >= 2.1 (SDPA's scale
argument) on cuda; nothing version-specific runs at import, so torch 1.13 imports it cleanly.
"""
import math

import torch
import torch.nn.functional as F


def setup(problem):
    d = problem.dims
    w_in, b_in, w_out, b_out, gamma, beta = problem.weights
    state = {"B": d["B"], "C": d["C"], "S": d["H"] * d["W"], "NH": d["NH"],
             "w_in": w_in, "b_in": b_in, "w_out": w_out, "b_out": b_out, "gamma": gamma, "beta": beta}
    if problem.device == "cuda":
        _warm_up(problem, state)
    return state


def run(state, inputs, outputs):
    B, C, S, NH = state["B"], state["C"], state["S"], state["NH"]
    hd = C // NH
    t = inputs[0].view(B, C, S).transpose(1, 2)            # (B, S, C) tokens, a view of x
    qkv = F.linear(t, state["w_in"], state["b_in"])        # (B, S, 3C), q | k | v
    # (3, B, NH, S, hd) views of qkv: the last dim stays contiguous, as the fused kernel needs.
    q, k, v = qkv.view(B, S, 3, NH, hd).permute(2, 0, 3, 1, 4)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=False, scale=1.0 / math.sqrt(hd))
    a = F.linear(y.transpose(1, 2).reshape(B, S, C), state["w_out"], state["b_out"])
    a += t                                                  # the residual
    y = F.layer_norm(a, (C,), state["gamma"], state["beta"], 1e-5)
    outputs[0].view(B, C, S).copy_(y.transpose(1, 2))      # tokens back to (B, C, H, W), in place


def _warm_up(problem, state):
    # One call at the shape's size, untimed: torch's lazy CUDA state (cuBLAS handles, the fused
    # kernel's first launch, allocator blocks) stays out of the timed calls. Run with only the
    # memory-efficient backend allowed, so that setup fails loudly if these inputs would send SDPA
    # to its math fallback (the full S x S scores) instead of the fused fp32 kernel this line claims.
    from torch.nn.attention import SDPBackend, sdpa_kernel
    d = problem.dims
    x = torch.randn((d["B"], d["C"], d["H"], d["W"]), device="cuda", dtype=torch.float32)
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
        run(state, [x], [torch.empty_like(x)])
    torch.cuda.synchronize()

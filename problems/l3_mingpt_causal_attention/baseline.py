"""kbench's reference line for l3_mingpt_causal_attention: PyTorch eager, attention by
torch.nn.functional.scaled_dot_product_attention. Timed and checked like a solution, never scored.

Computes minGPT's CausalSelfAttention (dropout 0) for x (B, T, C): q | k | v = x c_attn_weight^T +
c_attn_bias, NH heads of C / NH, per head softmax(q k^T / sqrt(C / NH)) with token t seeing tokens
0..t, times v; heads concatenated per token; out = y c_proj_weight^T + c_proj_bias.

problem.toml's tensors, in its order: input x (B, T, C); weights c_attn_weight (3C, C),
c_attn_bias (3C), c_proj_weight (C, C), c_proj_bias (C); output out (B, T, C).

Why torch SDPA in fp32 and not cuDNN: the problem is fp32 throughout, and cuDNN's fused attention
and FlashAttention take fp16/bf16 only (torch's dispatcher, aten/src/ATen/native/transformers/cuda/
sdp_utils.cpp of github:pytorch/pytorch: can_use_cudnn_attention and can_use_flash_attention both
require check_dtypes_low_precision, {Half, BFloat16} on sm80+). For fp32 CUDA tensors SDPA runs
torch's memory-efficient kernel (CUTLASS, from xformers), whose products on sm80+ are 3xTF32
(cutlass::arch::OpMultiplyAddFastF32, mem_eff_attention/gemm_kernel_utils.h): fp32-accurate.
is_causal=True is minGPT's tril mask (query t sees keys 0..t; SDPA aligns it top-left, and here
the query and key lengths are equal). The projections are cuBLAS SGEMMs in full fp32: torch's
default float32 matmul precision is "highest" (no TF32), and this file does not change it.
Requires torch >= 2.1 (SDPA's scale argument) on cuda; nothing version-specific runs at import, so
torch 1.13 imports it cleanly.
"""
import math

import torch
import torch.nn.functional as F


def setup(problem):
    d = problem.dims
    w_attn, b_attn, w_proj, b_proj = problem.weights
    state = {"B": d["B"], "T": d["T"], "C": d["C"], "NH": d["NH"],
             "w_attn": w_attn, "b_attn": b_attn, "w_proj_t": w_proj.t(), "b_proj": b_proj}
    if problem.device == "cuda":
        _warm_up(problem, state)
    return state


def run(state, inputs, outputs):
    B, T, C, NH = state["B"], state["T"], state["C"], state["NH"]
    hd = C // NH
    qkv = F.linear(inputs[0], state["w_attn"], state["b_attn"])     # (B, T, 3C)
    # (3, B, NH, T, hd) views of qkv (c_attn(x).split(C, dim=2), heads as view(B, T, NH, hd)):
    # the last dim stays contiguous, as the fused kernel needs, so no copy is made.
    q, k, v = qkv.view(B, T, 3, NH, hd).permute(2, 0, 3, 1, 4)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0 / math.sqrt(hd))
    # c_proj straight into kbench's buffer (the bias as cuBLASLt's epilogue).
    torch.addmm(state["b_proj"], y.transpose(1, 2).reshape(B * T, C), state["w_proj_t"],
                out=outputs[0].view(B * T, C))


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

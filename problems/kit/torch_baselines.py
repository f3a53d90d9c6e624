"""The shared code of the deck's PyTorch baselines: kbench's reference lines (each problem's
baseline.py), timed and checked like a solution, never scored and never offered to an agent.

kbench copies this file beside a staged baseline.py (the deck kit), so a baseline reads it with a
plain `import torch_baselines`. What lives here is what several baselines computed alike:

  rope_tables, rope   rotate-half RoPE at positions 0..T-1 (l4_grouped_query_attention,
                      l4_deepseek_mla)
  packed_attention    SDPA over a packed q | k | v projection (the l3 attention problems)
  merge_heads         SDPA's (B, heads, S, d) output as token-major rows (B S, heads d)
  warm_up             setup's untimed first call, with SDPA held to its fused fp32 kernel

Why torch SDPA in fp32 and not cuDNN: these problems are fp32 throughout, and cuDNN's fused
attention and FlashAttention take fp16/bf16 only (torch's dispatcher, aten/src/ATen/native/
transformers/cuda/sdp_utils.cpp of github:pytorch/pytorch: can_use_cudnn_attention and
can_use_flash_attention both require check_dtypes_low_precision, {Half, BFloat16} on sm80+). For
fp32 CUDA tensors SDPA runs torch's memory-efficient kernel (CUTLASS, from xformers), whose
products on sm80+ are 3xTF32 (cutlass::arch::OpMultiplyAddFastF32, mem_eff_attention/
gemm_kernel_utils.h): fp32-accurate. The projections are cuBLAS SGEMMs in full fp32: torch's
default float32 matmul precision is "highest" (no TF32), and no baseline changes it.

Nothing version-specific runs at import (torch.nn.attention is imported inside warm_up, SDPA is
looked up when called), so torch 1.13, which has neither, imports this file cleanly.
"""
import math

import torch
import torch.nn.functional as F

ROPE_BASE = 10000.0  # Llama's and DeepSeek-V3's RoPE base


def rope_tables(T, D, device):
    """RoPE's cos and sin per (position, frequency) for positions 0..T-1 and head dim D, from
    angles t * ROPE_BASE^(-2i/D) in double (the oracles' exact angles; fp32 angles are ~1e-4 rad
    off at t = 2047), stored in fp32 as (T, 1, D/2) to broadcast over batch and heads."""
    half = D // 2
    inv_freq = ROPE_BASE ** (-2.0 * torch.arange(half, dtype=torch.float64) / D)
    angles = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq[None, :]
    as_table = lambda t: t.to(torch.float32).view(T, 1, half).to(device)
    return as_table(torch.cos(angles)), as_table(torch.sin(angles))


def rope(x, cos, sin):
    """Rotate-half RoPE of x (B, T, heads, D) into a new contiguous tensor: the pair (x1[i], x2[i])
    of the two halves becomes (x1 cos - x2 sin, x2 cos + x1 sin); four elementwise kernels."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    o1, o2 = out[..., :half], out[..., half:]
    torch.mul(x1, cos, out=o1)
    o1.addcmul_(x2, sin, value=-1.0)
    torch.mul(x2, cos, out=o2)
    o2.addcmul_(x1, sin)
    return out


def merge_heads(y):
    """SDPA's output y (B, heads, S, d) as (B S, heads d): heads concatenated per token."""
    B, H, S, d = y.shape
    return y.transpose(1, 2).reshape(B * S, H * d)


def packed_attention(qkv, B, S, NH, is_causal):
    """Multi-head attention over a packed projection qkv ((B, S, 3C) or (B S, 3C): q | k | v, each
    NH heads of C / NH), per head softmax(q k^T / sqrt(C / NH)) v, causal or not; returns
    (B S, C), heads concatenated per token. is_causal=True is minGPT's tril mask (query t sees keys
    0..t; SDPA aligns it top-left, and here the query and key lengths are equal)."""
    C = qkv.shape[-1] // 3
    hd = C // NH
    # (3, B, NH, S, hd) views of qkv: the last dim stays contiguous, as the fused kernel needs, so
    # no copy is made.
    q, k, v = qkv.view(B, S, 3, NH, hd).permute(2, 0, 3, 1, 4)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, scale=1.0 / math.sqrt(hd))
    return merge_heads(y)


def warm_up(run, state, x_shape):
    """One call of the baseline's run at the shape's size, on CUDA, untimed: torch's lazy CUDA
    state (cuBLAS handles, the fused kernel's first launch, allocator blocks) stays out of the
    timed calls. x_shape is the shape of the single fp32 input. Run with only the memory-efficient
    backend allowed, so that setup fails loudly if these inputs would send SDPA to its math
    fallback (every sequence-by-sequence score) instead of the fused fp32 kernel the line claims."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    x = torch.randn(x_shape, device="cuda", dtype=torch.float32)
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
        run(state, [x], [torch.empty_like(x)])
    torch.cuda.synchronize()

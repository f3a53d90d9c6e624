"""kbench's reference line for l3_minigpt_block: PyTorch eager, attention by
torch.nn.functional.scaled_dot_product_attention. Timed and checked like a solution, never scored.

Computes minGPT's pre-LayerNorm Block (dropout 0) for x (B, T, C):
  u   = x + CausalSelfAttention(LayerNorm_1(x))   (c_attn Linear(C, 3C), NH heads of C / NH,
        softmax(q k^T / sqrt(C / NH)) with token t seeing tokens 0..t, times v, heads merged, c_proj)
  out = u + mlp_c_proj(gelu_tanh(c_fc(LayerNorm_2(u))))   (c_fc Linear(C, 4C), NewGELU = the tanh
        approximation 0.5 h (1 + tanh(sqrt(2 / pi) (h + 0.044715 h^3))), c_proj Linear(4C, C))
both LayerNorms affine with eps 1e-5.

problem.toml's tensors, in its order: input x (B, T, C); weights ln_1_weight, ln_1_bias (C),
c_attn_weight (3C, C), c_attn_bias (3C), attn_c_proj_weight (C, C), attn_c_proj_bias (C),
ln_2_weight, ln_2_bias (C), c_fc_weight (4C, C), c_fc_bias (4C), mlp_c_proj_weight (C, 4C),
mlp_c_proj_bias (C); output out (B, T, C).

Why torch SDPA in fp32 and not cuDNN: the problem is fp32 throughout, and cuDNN's fused attention
and FlashAttention take fp16/bf16 only (torch's dispatcher, aten/src/ATen/native/transformers/cuda/
sdp_utils.cpp of github:pytorch/pytorch: can_use_cudnn_attention and can_use_flash_attention both
require check_dtypes_low_precision, {Half, BFloat16} on sm80+). For fp32 CUDA tensors SDPA runs
torch's memory-efficient kernel (CUTLASS, from xformers), whose products on sm80+ are 3xTF32
(cutlass::arch::OpMultiplyAddFastF32, mem_eff_attention/gemm_kernel_utils.h): fp32-accurate.
is_causal=True is minGPT's tril mask (top-left aligned; query and key lengths are equal here). The
four Linear layers are cuBLAS SGEMMs in full fp32: torch's default float32 matmul precision is
"highest" (no TF32), and this file does not change it. F.gelu(approximate="tanh") is NewGELU's
formula. Requires torch >= 2.1 (SDPA's scale argument) on cuda; nothing version-specific runs at
import, so torch 1.13 imports it cleanly.
"""
import math

import torch
import torch.nn.functional as F


def setup(problem):
    d = problem.dims
    (ln1_w, ln1_b, w_attn, b_attn, w_aproj, b_aproj,
     ln2_w, ln2_b, w_fc, b_fc, w_mproj, b_mproj) = problem.weights
    state = {"B": d["B"], "T": d["T"], "C": d["C"], "NH": d["NH"],
             "ln1_w": ln1_w, "ln1_b": ln1_b, "w_attn": w_attn, "b_attn": b_attn,
             "w_aproj": w_aproj, "b_aproj": b_aproj, "ln2_w": ln2_w, "ln2_b": ln2_b,
             "w_fc": w_fc, "b_fc": b_fc, "w_mproj_t": w_mproj.t(), "b_mproj": b_mproj}
    if problem.device == "cuda":
        _warm_up(problem, state)
    return state


def run(state, inputs, outputs):
    B, T, C, NH = state["B"], state["T"], state["C"], state["NH"]
    hd = C // NH
    x = inputs[0].view(B * T, C)
    h = F.layer_norm(x, (C,), state["ln1_w"], state["ln1_b"], 1e-5)
    qkv = F.linear(h, state["w_attn"], state["b_attn"])            # (B T, 3C)
    # (3, B, NH, T, hd) views of qkv: the last dim stays contiguous, as the fused kernel needs.
    q, k, v = qkv.view(B, T, 3, NH, hd).permute(2, 0, 3, 1, 4)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0 / math.sqrt(hd))
    u = F.linear(y.transpose(1, 2).reshape(B * T, C), state["w_aproj"], state["b_aproj"])
    u += x                                                          # first residual
    g = F.linear(F.layer_norm(u, (C,), state["ln2_w"], state["ln2_b"], 1e-5), state["w_fc"], state["b_fc"])
    g = F.gelu(g, approximate="tanh")
    out = outputs[0].view(B * T, C)
    torch.addmm(state["b_mproj"], g, state["w_mproj_t"], out=out)  # MLP c_proj into kbench's buffer
    out += u                                                        # second residual


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

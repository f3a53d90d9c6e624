"""kbench's reference line for l4_deepseek_mla: PyTorch eager, attention by
torch.nn.functional.scaled_dot_product_attention. Timed and checked like a solution, never scored.

Computes DeepSeek-V3's multi-head latent attention, causal, for x (batch, seq_len, hidden_size),
no biases, RMSNorm eps 1e-6 with weights (rms_norm(y, w) = y / sqrt(mean(y^2) + eps) * w):
  q               = W_q_b rms_norm(W_q_a x, q_norm)      per head: qk_nope dims, then qk_rope dims
  latent | k_rope = W_kv_a x                             kv_lora_rank dims, then qk_rope dims
  k_nope | v      = W_kv_b rms_norm(latent, kv_norm)     per head: qk_nope dims, then v_head_dim
  rotate-half RoPE (base 10000, position = index in the sequence) on every head's q_rope and on
  the k_rope shared by all heads; k = k_nope | k_rope per head;
  per head softmax(q k^T / sqrt(qk_nope + qk_rope)) with token t seeing tokens 0..t, times v;
  out = W_o (heads concatenated).

problem.toml's tensors, in its order: input x; weights W_q_a (q_lora_rank, hidden_size), q_norm
(q_lora_rank), W_q_b (num_heads (qk_nope + qk_rope), q_lora_rank), W_kv_a (kv_lora_rank + qk_rope,
hidden_size), kv_norm (kv_lora_rank), W_kv_b (num_heads (qk_nope + v_head_dim), kv_lora_rank), W_o
(hidden_size, num_heads v_head_dim); output out (batch, seq_len, hidden_size).

Why torch SDPA in fp32 and not cuDNN: the problem is fp32 throughout, and cuDNN's fused attention
and FlashAttention take fp16/bf16 only (torch's dispatcher, aten/src/ATen/native/transformers/cuda/
sdp_utils.cpp of github:pytorch/pytorch: can_use_cudnn_attention and can_use_flash_attention both
require check_dtypes_low_precision, {Half, BFloat16} on sm80+). For fp32 CUDA tensors SDPA runs
torch's memory-efficient kernel (CUTLASS, from xformers), whose products on sm80+ are 3xTF32
(cutlass::arch::OpMultiplyAddFastF32, mem_eff_attention/gemm_kernel_utils.h): fp32-accurate. It
takes a value head dim (128) other than the query/key one (192), as MLA needs. The projections are
cuBLAS SGEMMs in full fp32: torch's default float32 matmul precision is "highest" (no TF32), and
this file does not change it. The attention is computed unabsorbed (per-head keys and values from
W_kv_b), the form whose cost problem.toml counts. Requires torch >= 2.4 (F.rms_norm; SDPA's scale
argument from 2.1) on cuda; nothing version-specific runs at import, so torch 1.13 imports it
cleanly.
"""
import torch
import torch.nn.functional as F

RMS_EPS = 1e-6       # DeepSeek-V3's rms_norm_eps
ROPE_BASE = 10000.0  # v3's rope base


def setup(problem):
    d = problem.dims
    w_qa, q_norm, w_qb, w_kva, kv_norm, w_kvb, w_o = problem.weights
    state = {k: d[k] for k in ("batch", "seq_len", "hidden_size", "num_heads", "q_lora_rank",
                               "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")}
    # W_q_a and W_kv_a both read x: one GEMM for both (weights never change; untimed setup work).
    state.update(w_a=torch.cat((w_qa, w_kva), dim=0), q_norm=q_norm, w_qb=w_qb, kv_norm=kv_norm,
                 w_kvb=w_kvb, w_o_t=w_o.t())
    # RoPE's cos and sin per (position, frequency), from angles in double (the oracle's exact
    # angles), stored in fp32 as (seq_len, 1, qk_rope / 2) to broadcast over batch and heads.
    state["cos"], state["sin"] = _rope_tables(d["seq_len"], d["qk_rope_head_dim"], problem.device)
    if problem.device == "cuda":
        _warm_up(problem, state)
    return state


def run(state, inputs, outputs):
    B, S, hidden, H = state["batch"], state["seq_len"], state["hidden_size"], state["num_heads"]
    q_rank, kv_rank = state["q_lora_rank"], state["kv_lora_rank"]
    d_nope, d_rope, d_v = state["qk_nope_head_dim"], state["qk_rope_head_dim"], state["v_head_dim"]
    d_qk = d_nope + d_rope
    a = F.linear(inputs[0].view(B * S, hidden), state["w_a"])      # (B S, q_rank | kv_rank | d_rope)
    q_lat, latent, k_rope = a[:, :q_rank], a[:, q_rank:q_rank + kv_rank], a[:, q_rank + kv_rank:]
    q = F.linear(F.rms_norm(q_lat, (q_rank,), state["q_norm"], RMS_EPS), state["w_qb"]).view(B, S, H, d_qk)
    kv = F.linear(F.rms_norm(latent, (kv_rank,), state["kv_norm"], RMS_EPS), state["w_kvb"])
    kv = kv.view(B, S, H, d_nope + d_v)
    cos, sin = state["cos"], state["sin"]
    q[..., d_nope:] = _rope(q[..., d_nope:], cos, sin)              # q is this call's own scratch
    k = torch.empty((B, S, H, d_qk), dtype=q.dtype, device=q.device)
    k[..., :d_nope] = kv[..., :d_nope]
    k[..., d_nope:] = _rope(k_rope.view(B, S, 1, d_rope), cos, sin)  # one key part for every head
    v = kv[..., d_nope:]
    # (B, H, S, dim) views of the token-major tensors; the last dim stays contiguous.
    y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                       is_causal=True, scale=d_qk ** -0.5)
    torch.mm(y.transpose(1, 2).reshape(B * S, H * d_v), state["w_o_t"], out=outputs[0].view(B * S, hidden))


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
    # to its math fallback (the full S x S scores) instead of the fused fp32 kernel this line claims.
    from torch.nn.attention import SDPBackend, sdpa_kernel
    d = problem.dims
    x = torch.randn((d["batch"], d["seq_len"], d["hidden_size"]), device="cuda", dtype=torch.float32)
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
        run(state, [x], [torch.empty_like(x)])
    torch.cuda.synchronize()

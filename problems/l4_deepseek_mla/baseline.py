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

Why torch SDPA in fp32 and not cuDNN, and why the projections are fp32 SGEMMs: see the deck kit's
torch_baselines.py, which holds the code this line shares with the deck's other PyTorch baselines
(RoPE among it). SDPA's memory-efficient kernel takes a value head dim (128) other than the
query/key one (192), as MLA needs. The attention is computed unabsorbed (per-head keys and values
from W_kv_b), the form whose cost problem.toml counts. Requires torch >= 2.4 (F.rms_norm; SDPA's
scale argument from 2.1) on cuda; nothing version-specific runs at import, so torch 1.13 imports it
cleanly.
"""
import torch
import torch.nn.functional as F

import torch_baselines

RMS_EPS = 1e-6  # DeepSeek-V3's rms_norm_eps (its rope base is torch_baselines.ROPE_BASE, 10000)


def setup(problem):
    d = problem.dims
    w_qa, q_norm, w_qb, w_kva, kv_norm, w_kvb, w_o = problem.weights
    state = {k: d[k] for k in ("batch", "seq_len", "hidden_size", "num_heads", "q_lora_rank",
                               "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")}
    # W_q_a and W_kv_a both read x: one GEMM for both (weights never change; untimed setup work).
    state.update(w_a=torch.cat((w_qa, w_kva), dim=0), q_norm=q_norm, w_qb=w_qb, kv_norm=kv_norm,
                 w_kvb=w_kvb, w_o_t=w_o.t())
    # RoPE's cos and sin per (position, frequency), from angles in double (the oracle's exact
    # angles), as (seq_len, 1, qk_rope / 2) fp32 tables.
    state["cos"], state["sin"] = torch_baselines.rope_tables(d["seq_len"], d["qk_rope_head_dim"],
                                                             problem.device)
    if problem.device == "cuda":
        torch_baselines.warm_up(run, state, (d["batch"], d["seq_len"], d["hidden_size"]))
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
    q[..., d_nope:] = torch_baselines.rope(q[..., d_nope:], cos, sin)  # q: this call's scratch
    k = torch.empty((B, S, H, d_qk), dtype=q.dtype, device=q.device)
    k[..., :d_nope] = kv[..., :d_nope]
    # One key part for every head.
    k[..., d_nope:] = torch_baselines.rope(k_rope.view(B, S, 1, d_rope), cos, sin)
    v = kv[..., d_nope:]
    # (B, H, S, dim) views of the token-major tensors; the last dim stays contiguous.
    y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                       is_causal=True, scale=d_qk ** -0.5)
    torch.mm(torch_baselines.merge_heads(y), state["w_o_t"], out=outputs[0].view(B * S, hidden))

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

Why torch SDPA in fp32 and not cuDNN, and why the four Linear layers are fp32 SGEMMs: see the
deck kit's torch_baselines.py, which holds the code this line shares with the deck's other PyTorch
baselines. is_causal=True is minGPT's tril mask (top-left aligned; query and key lengths are equal
here). F.gelu(approximate="tanh") is NewGELU's formula. Requires torch >= 2.1 (SDPA's scale
argument) on cuda; nothing version-specific runs at import, so torch 1.13 imports it cleanly.
"""
import torch
import torch.nn.functional as F

import torch_baselines


def setup(problem):
    d = problem.dims
    (ln1_w, ln1_b, w_attn, b_attn, w_aproj, b_aproj,
     ln2_w, ln2_b, w_fc, b_fc, w_mproj, b_mproj) = problem.weights
    state = {"B": d["B"], "T": d["T"], "C": d["C"], "NH": d["NH"],
             "ln1_w": ln1_w, "ln1_b": ln1_b, "w_attn": w_attn, "b_attn": b_attn,
             "w_aproj": w_aproj, "b_aproj": b_aproj, "ln2_w": ln2_w, "ln2_b": ln2_b,
             "w_fc": w_fc, "b_fc": b_fc, "w_mproj_t": w_mproj.t(), "b_mproj": b_mproj}
    if problem.device == "cuda":
        torch_baselines.warm_up(run, state, (d["B"], d["T"], d["C"]))
    return state


def run(state, inputs, outputs):
    B, T, C, NH = state["B"], state["T"], state["C"], state["NH"]
    x = inputs[0].view(B * T, C)
    h = F.layer_norm(x, (C,), state["ln1_w"], state["ln1_b"], 1e-5)
    qkv = F.linear(h, state["w_attn"], state["b_attn"])            # (B T, 3C)
    y = torch_baselines.packed_attention(qkv, B, T, NH, is_causal=True)  # (B T, C)
    u = F.linear(y, state["w_aproj"], state["b_aproj"])
    u += x                                                          # first residual
    g = F.linear(F.layer_norm(u, (C,), state["ln2_w"], state["ln2_b"], 1e-5), state["w_fc"], state["b_fc"])
    g = F.gelu(g, approximate="tanh")
    out = outputs[0].view(B * T, C)
    torch.addmm(state["b_mproj"], g, state["w_mproj_t"], out=out)  # MLP c_proj into kbench's buffer
    out += u                                                        # second residual

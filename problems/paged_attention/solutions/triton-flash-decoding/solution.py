"""Paged-attention decode as FlashDecoding in two Triton kernels (docs/python-solutions.md), an honest
solution of paged_attention on the cuda target.

Design (reference.cpp's layouts: token t of sequence b is slot t % page_size of page
block_table[b, t / page_size]; kv_cache[page, slot, kv_head, :] holds K in its first head_dim values
and V in the next head_dim; query head h reads kv head h / (num_heads / num_kv_heads); the scale is
1 / sqrt(head_dim)):

  1. _split_kernel, grid (splits, num_kv_heads, batch). Program (s, kvh, b) owns tokens
     [s * SPLIT, min(seq_lens[b], (s + 1) * SPLIT)) of sequence b, and all GROUP query heads that
     read kv head kvh (GROUP = num_heads / num_kv_heads), so every K and V row is read from memory
     once. A split that starts at or past seq_lens[b] exits at once. The program walks its tokens
     in tiles of BLOCK_T (= 4 pages of 16): it gathers the tile's page ids from the sequence's row
     of block_table, loads K and V [BLOCK_T, head_dim] (masked at seq_lens[b]: tokens past the end,
     and the stale table entries past the sequence's last page, are never read), computes the
     scores of the GROUP heads with one tensor-core product (bf16 x bf16, fp32 accumulation; the
     head rows are padded to 16 with zero queries whose results are never stored), and updates an
     online softmax per head: running max m, running sum l and the unnormalised weighted V sum,
     all fp32 (base-2 exponentials with log2(e) folded into the scale). The weights are rounded
     to bf16 for the P.V tensor-core product (accumulated in fp32); l is summed from the fp32
     weights. The split's (m, l, accumulator) per query head go to partial buffers.
  2. _combine_kernel, grid (num_heads, batch): reads the ceil(seq_lens[b] / SPLIT) partials of
     its (sequence, head), rescales them to their common max, divides the summed accumulators by
     the summed l and stores bf16 into out. Every element of out is written at every call.

SPLIT (64, 128 or 256 tokens) is chosen per shape by a fixed rule: the largest split that still
gives about three programs per SM over the shape's tokens (total_tokens is a dim), so that the
batch of 4 long sequences spreads over the GPU as well as the batch of 32.

Honesty: all the arithmetic (scores, softmax, weighted sums, the merge of the splits) is done by
the two Triton kernels; torch only allocates the partial buffers (in setup, at the shape's
maximum: batch * num_heads * ceil(max_seq_len / SPLIT) slots). Nothing is carried from one call to
the next: every call's split kernel writes the partial slots that its combine kernel reads (those
of the splits below each sequence's length, from this call's seq_lens), and the combine reads no
other slot, so the buffers' earlier contents are never used. Inputs are only read; everything
runs on torch's current stream (kbench's).

Compilation: setup launches both kernels once on scratch tensors of the shape's real sizes and
dtypes (bf16 query, kv_cache and out, int32 block_table and seq_lens, the same integer
arguments), then synchronizes, so run finds them compiled: a first launch inside run would
JIT-compile there, after the worker's system-call filter is on, and ptxas would be killed.
"""
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _split_kernel(q_ptr, kv_ptr, table_ptr, lens_ptr, part_acc_ptr, part_m_ptr, part_l_ptr,
                  qk_scale, max_pages, num_splits,
                  HEADS: tl.constexpr, KV_HEADS: tl.constexpr, GROUP: tl.constexpr, G_PAD: tl.constexpr,
                  HEAD_DIM: tl.constexpr, PAGE: tl.constexpr, SPLIT: tl.constexpr, BLOCK_T: tl.constexpr):
    split = tl.program_id(0)
    kvh = tl.program_id(1)
    b = tl.program_id(2)
    length = tl.load(lens_ptr + b)
    t0 = split * SPLIT
    if t0 < length:
        t_end = tl.minimum(length, t0 + SPLIT)
        g = tl.arange(0, G_PAD)
        d = tl.arange(0, HEAD_DIM)
        g_ok = g < GROUP
        head = kvh * GROUP + g  # the query heads that read kv head kvh (rows >= GROUP: padding)
        q = tl.load(q_ptr + (b * HEADS + head)[:, None] * HEAD_DIM + d[None, :], mask=g_ok[:, None], other=0.0)

        m_i = tl.full([G_PAD], float("-inf"), tl.float32)
        l_i = tl.zeros([G_PAD], tl.float32)
        acc = tl.zeros([G_PAD, HEAD_DIM], tl.float32)
        offs_t = tl.arange(0, BLOCK_T)
        table_row = table_ptr + b.to(tl.int64) * max_pages
        for start in range(t0, t_end, BLOCK_T):
            tok = start + offs_t
            t_ok = tok < t_end
            page_id = tl.load(table_row + tok // PAGE, mask=t_ok, other=0).to(tl.int64)
            # Element offset of the token's K for kv head kvh; its V follows HEAD_DIM later.
            base = ((page_id * PAGE + tok % PAGE) * KV_HEADS + kvh) * (2 * HEAD_DIM)
            k = tl.load(kv_ptr + base[:, None] + d[None, :], mask=t_ok[:, None], other=0.0)
            v = tl.load(kv_ptr + base[:, None] + HEAD_DIM + d[None, :], mask=t_ok[:, None], other=0.0)
            s = tl.dot(q, tl.trans(k)) * qk_scale  # [G_PAD, BLOCK_T], fp32, log2 units
            s = tl.where(t_ok[None, :], s, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(s, axis=1))  # finite: every tile has a token < t_end
            alpha = tl.exp2(m_i - m_new)
            p = tl.exp2(s - m_new[:, None])
            l_i = l_i * alpha + tl.sum(p, axis=1)
            acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), v)
            m_i = m_new

        slot = (b * HEADS + head) * num_splits + split
        tl.store(part_acc_ptr + slot[:, None] * HEAD_DIM + d[None, :], acc, mask=g_ok[:, None])
        tl.store(part_m_ptr + slot, m_i, mask=g_ok)
        tl.store(part_l_ptr + slot, l_i, mask=g_ok)


@triton.jit
def _combine_kernel(part_acc_ptr, part_m_ptr, part_l_ptr, lens_ptr, out_ptr, num_splits,
                    HEADS: tl.constexpr, HEAD_DIM: tl.constexpr, SPLIT: tl.constexpr, S_PAD: tl.constexpr):
    h = tl.program_id(0)
    b = tl.program_id(1)
    length = tl.load(lens_ptr + b)
    n = (length + SPLIT - 1) // SPLIT  # the splits the split kernel wrote for sequence b (>= 1)
    sidx = tl.arange(0, S_PAD)
    s_ok = sidx < n
    d = tl.arange(0, HEAD_DIM)
    first = (b * HEADS + h) * num_splits
    m = tl.load(part_m_ptr + first + sidx, mask=s_ok, other=float("-inf"))
    l = tl.load(part_l_ptr + first + sidx, mask=s_ok, other=0.0)
    m_max = tl.max(m, axis=0)
    w = tl.exp2(m - m_max)  # 0 for the masked slots
    total = tl.sum(l * w, axis=0)
    acc = tl.load(part_acc_ptr + (first + sidx)[:, None] * HEAD_DIM + d[None, :], mask=s_ok[:, None], other=0.0)
    o = tl.sum(acc * w[:, None], axis=0) / total
    tl.store(out_ptr + (b * HEADS + h) * HEAD_DIM + d, o.to(tl.bfloat16))


def _split_size(total_tokens, kv_heads, sms):
    # The largest split that leaves about 3 programs per SM over the shape's tokens.
    for split in (256, 128):
        if (total_tokens // split) * kv_heads >= 3 * sms:
            return split
    return 64


def _launch(st, q, kv, table, lens, out):
    _split_kernel[(st["splits"], st["kv_heads"], st["batch"])](
        q, kv, table, lens, st["part_acc"], st["part_m"], st["part_l"],
        st["qk_scale"], st["max_pages"], st["splits"],
        HEADS=st["heads"], KV_HEADS=st["kv_heads"], GROUP=st["group"], G_PAD=st["g_pad"],
        HEAD_DIM=st["head_dim"], PAGE=st["page"], SPLIT=st["split"], BLOCK_T=st["block_t"],
        num_warps=4, num_stages=2)
    _combine_kernel[(st["heads"], st["batch"])](
        st["part_acc"], st["part_m"], st["part_l"], lens, out, st["splits"],
        HEADS=st["heads"], HEAD_DIM=st["head_dim"], SPLIT=st["split"], S_PAD=st["s_pad"],
        num_warps=4)


def setup(problem):
    dims = problem.dims
    dev = problem.device
    batch, heads, kv_heads = dims["batch"], dims["num_heads"], dims["num_kv_heads"]
    head_dim, page, max_len, total = dims["head_dim"], dims["page_size"], dims["max_seq_len"], dims["total_tokens"]
    if heads % kv_heads != 0 or head_dim < 16 or head_dim & (head_dim - 1) or page & (page - 1):
        raise ValueError("paged_attention: a shape this solution was not written for")
    group = heads // kv_heads
    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    split = max(_split_size(total, kv_heads, sms), page)
    splits = -(-max_len // split)
    max_pages = -(-max_len // page)
    st = {
        "batch": batch, "heads": heads, "kv_heads": kv_heads, "group": group,
        "g_pad": max(16, triton.next_power_of_2(group)), "head_dim": head_dim, "page": page,
        "split": split, "block_t": min(split, 64), "splits": splits, "s_pad": max(2, triton.next_power_of_2(splits)),
        "max_pages": max_pages, "qk_scale": math.log2(math.e) / math.sqrt(head_dim),
    }
    # Partials at the shape's maximum: every (sequence, query head, split) slot. Each call's split
    # kernel rewrites the slots its combine kernel reads; nothing else of them is ever read.
    slots = batch * heads * splits
    st["part_acc"] = torch.empty((slots, head_dim), device=dev, dtype=torch.float32)
    st["part_m"] = torch.empty((slots,), device=dev, dtype=torch.float32)
    st["part_l"] = torch.empty((slots,), device=dev, dtype=torch.float32)

    # Compile both kernels now, on scratch tensors of the real sizes and dtypes (every sequence at
    # the maximum length, so every split runs; the table points at valid pages of the pool).
    pool = -(-total // page) + batch
    q = torch.zeros((batch, heads, head_dim), device=dev, dtype=torch.bfloat16)
    kv = torch.zeros((pool, page, kv_heads, 2 * head_dim), device=dev, dtype=torch.bfloat16)
    table = torch.zeros((batch, max_pages), device=dev, dtype=torch.int32)
    lens = torch.full((batch,), max_len, device=dev, dtype=torch.int32)
    out = torch.empty((batch, heads, head_dim), device=dev, dtype=torch.bfloat16)
    _launch(st, q, kv, table, lens, out)
    torch.cuda.synchronize()
    return st


def run(state, inputs, outputs):
    # Launched on the current stream: kbench's, made current around this call by the bridge.
    _launch(state, inputs[0], inputs[1], inputs[2], inputs[3], outputs[0])

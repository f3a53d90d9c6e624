// What a prompt says about its problem's shapes, held to problem.toml. prompt.md is prose for an
// agent, and an agent tunes for what it reads: "the last two shapes are Llama-3-70B's" or "one shape
// is a single sequence" must be true of the shapes the evaluator runs. The shape list itself is
// rendered from problem.toml ({{shapes}}); every other statement about the shapes is a claim in
// problems/<id>/prompt_claims.toml, quoted from the prompt and checked here against the loaded
// problem (format: docs/problem-format.md, "prompt_claims.toml"):
//
//   [[claim]]
//   text = "the first, second and fourth are Llama-3-8B's attention"   # quoted from prompt.md
//   shapes = [0, 1, 3]                          # exactly the shapes where `where` holds ("all": every one)
//   where = { num_heads = 32, num_kv_heads = 8, head_dim = 128 }
//
//   [[claim]]
//   text = "the smallest batch holds 4 sequences"
//   min = { batch = 4 }                         # the dim's smallest value over the shapes (max: largest)
//
//   [[exempt]]
//   text = "the decode-step attention kernel"   # matched by the scan below, but not about a shape
//   why = "what the kernel is for: every shape is one decode step"
//
// `where` values: an integer (equal), or a table of min, max, multiple_of, not_multiple_of; and
// `label` (a substring of the shape's label), `labelled` (true: the shape has a label of its own),
// `init = { tensor = "normal" }` (the tensor's distribution or generator in that shape), or with its
// parameters, `init = { x = { is = "normal", std = 4.0 } }` (a number, or a table of min and max).
//
// So that a new statement cannot slip in unchecked, the prompt is scanned for what reads as one: a
// dim with a value ("M = 32", "K = V = 128"), a sized model name ("Llama-3-8B", "Qwen3-30B-A3B"),
// "decode"/"prefill", a number of tokens, heads, experts, pages or rows ("16-token pages"), and a
// count or an ordinal in a sentence about the shapes ("one shape", "the last two"). Each must lie
// inside the text of a claim or an exemption.
#pragma once

#include <string>
#include <vector>

#include "deck/problem.h"

namespace kb {

// Every way the problem's prompt.md and prompt_claims.toml disagree with problem.toml or with each
// other, one message each naming the file, the claim and what is wrong; empty when they agree. A
// missing prompt.md or prompt_claims.toml, a TOML error or an unknown key is a message too.
std::vector<std::string> check_prompt_claims(const Problem& p);

// The same, for given texts (tests): `claims_toml` is the content of prompt_claims.toml.
std::vector<std::string> check_prompt_claims(const Problem& p, const std::string& prompt, const std::string& claims_toml);

}  // namespace kb

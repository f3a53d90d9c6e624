// What a check found: the reason (verdict/reason.h), a message for a person, and the evidence
// behind it, kept structured from where it was found (the static scan's source lines, the exported
// symbols, the SASS lines, the worst output elements). Checks return one; the result records carry
// it; the automatic annotation (eval/annotate.h) quotes its evidence instead of re-deriving it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "verdict/reason.h"

namespace kb {

// One piece of evidence, verbatim from where it was found.
struct Evidence {
  std::string kind;    // "source" (a solution file line), "sass" (an instruction), "kernel" (a kernel's
                       // facts), "symbol" (an exported name), "output" (a wrong element), "message"
  std::string file;    // "source": relative to the solution folder; "kernel": where a Python
                       // solution's Triton kernel is defined, relative to its staged sources
  int line = 0;        // "source", "kernel" with a file: 1-based
  std::string kernel;  // "sass", "kernel": the kernel's name as in the binary
  std::string text;    // the verbatim line, instruction, symbol or element
  std::string note;    // what it shows (the rule matched, the class counted, ...)
};

nlohmann::json to_json(const Evidence& e);

struct Finding {
  Reason reason = Reason::none;  // none: nothing found
  std::string message;
  std::vector<Evidence> evidence;

  Finding() = default;
  Finding(Reason r, std::string m, std::vector<Evidence> e = {})
      : reason(r), message(std::move(m)), evidence(std::move(e)) {}

  bool failed() const { return reason != Reason::none; }
  Verdict verdict() const { return reason_row(reason).verdict; }
  // The same finding with `prefix` before its message (where it was found: "shape 2 (n=4): ").
  Finding located(const std::string& prefix) const& { return {reason, prefix + message, evidence}; }
};

}  // namespace kb

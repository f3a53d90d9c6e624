// The adapters of the real agent CLIs and of kbench's own agent loop, one file each in this
// folder; agent/adapter.cpp maps the names given to --agent onto these.
#pragma once

#include <memory>

#include "agent/adapter.h"

namespace kb {

// Each throws std::invalid_argument when its CLI is not installed (saying how to install it).
std::unique_ptr<AgentAdapter> make_claude_code_adapter(const AdapterOptions& o);  // claude-code
std::unique_ptr<AgentAdapter> make_codex_adapter(const AdapterOptions& o);        // codex
std::unique_ptr<AgentAdapter> make_opencode_adapter(const AdapterOptions& o);     // opencode
std::unique_ptr<AgentAdapter> make_gemini_cli_adapter(const AdapterOptions& o);   // gemini
std::unique_ptr<AgentAdapter> make_kimi_code_adapter(const AdapterOptions& o);    // kimi
std::unique_ptr<AgentAdapter> make_kbench_loop_adapter(const AdapterOptions& o);  // kbench

}  // namespace kb

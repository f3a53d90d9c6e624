// One event model for what every agent did, whatever CLI produced it. Each adapter turns its raw
// transcript (stdout/stderr as captured) into these events, so the viewer, the usage/cost
// accounting and the forensic annotations read one format (transcript/events.jsonl of a run).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kb {

enum class EventKind {
  user,            // a message to the agent (the prompt, or a follow-up)
  assistant_text,  // text the model wrote for the user
  reasoning,       // the model's visible reasoning / thinking, when the CLI exposes it
  tool_call,       // the agent asked a tool to run (shell command, file edit, ...)
  tool_result,     // what the tool returned
  usage,           // token counts (and cost when known) of one model call or of the whole run
  error,           // an error the CLI or the model API reported
};

std::string_view event_kind_name(EventKind k);
// Throws std::invalid_argument naming the value and the valid names.
EventKind parse_event_kind(std::string_view name);

// Token counts as the providers report them; missing numbers stay unset, never guessed as 0.
struct Usage {
  std::optional<int64_t> input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens;
  std::optional<double> cost_usd;
};

// The JSON form of usage shared by transcripts, the gateway log and usage.json: unset numbers omitted.
nlohmann::json usage_to_json(const Usage& u);

struct TranscriptEvent {
  EventKind kind = EventKind::assistant_text;
  std::optional<double> t;        // seconds since the agent started, when the source has timestamps
  std::string text;               // message / reasoning / tool output / error text
  std::string stream;             // where the raw line came from: "stdout" or "stderr"
  std::string tool;               // tool_call / tool_result: the tool's name
  std::string call_id;            // tool_call / tool_result: pairs a result with its call
  nlohmann::json input;           // tool_call: the tool's arguments as the CLI gave them (null if none)
  std::optional<Usage> usage;     // usage events
  // usage events: "part" (one model call or turn; the parts add up to the run's usage) or "total"
  // (the CLI's own total for the run so far; the last one counts).
  std::string scope;
  std::optional<bool> is_error;   // tool_result: the tool reported failure
};

nlohmann::json to_json(const TranscriptEvent& e);
TranscriptEvent event_from_json(const nlohmann::json& j);  // throws std::invalid_argument naming the field

// The usage a transcript reports: the last "total" when the CLI gave one, else the sum of the
// "part" events; nullopt when it reports none. A count none of the events gave stays unset.
std::optional<Usage> transcript_usage(const std::vector<TranscriptEvent>& events);

// The raw capture of one agent run (transcript/ of the run directory).
struct TranscriptFiles {
  std::filesystem::path stdout_file;
  std::filesystem::path stderr_file;
  std::filesystem::path home;  // the run's private HOME, for CLIs that keep their own session logs there
};

// Splits a captured stream into lines (a last line without '\n' counts; '\r' before '\n' dropped).
std::vector<std::string> read_lines(const std::filesystem::path& file);

// One JSON object per line. Written through a temporary file and a rename.
void write_events_jsonl(const std::filesystem::path& file, const std::vector<TranscriptEvent>& events);
std::vector<TranscriptEvent> read_events_jsonl(const std::filesystem::path& file);

}  // namespace kb

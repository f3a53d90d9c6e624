#include "sweep/progress.h"

#include <ostream>

#include "store/run_dir.h"
#include "sweep/sweep_status.h"

namespace kb {

namespace {
constexpr size_t kRecentEvents = 6;  // the live block's tail of events
}

SweepProgress::SweepProgress(Mode mode, sql::Database& db, std::string sweep, std::ostream& out, std::ostream& err)
    : mode_(mode), db_(db), sweep_(std::move(sweep)), out_(out), err_(err) {}

void SweepProgress::event(const SweepEvent& e) {
  switch (mode_) {
    case Mode::json:
      out_ << to_json(e).dump() << "\n" << std::flush;
      return;
    case Mode::lines:
      out_ << e.time << "  " << event_line(e) << "\n" << std::flush;
      return;
    case Mode::live:
      recent_.push_back(event_line(e));
      while (recent_.size() > kRecentEvents) recent_.pop_front();
      if (e.kind == "sweep_finished" || e.kind == "sweep_stopping") redraw();
      return;
  }
}

void SweepProgress::tick() {
  if (mode_ == Mode::live) return redraw();
  if (mode_ == Mode::lines && std::chrono::steady_clock::now() - last_line_status_ >= std::chrono::minutes(1)) {
    last_line_status_ = std::chrono::steady_clock::now();
    try {
      const std::string text = sweep_status_text(read_sweep_status(db_, sweep_), false);
      out_ << iso_utc(std::chrono::system_clock::now()) << "  status  " << text.substr(0, text.find('\n')) << "\n" << std::flush;
    } catch (const std::exception&) {
    }
  }
}

void SweepProgress::redraw() {
  std::string block;
  try {
    block = sweep_status_text(read_sweep_status(db_, sweep_), true);
  } catch (const std::exception& e) {
    block = std::string("status unavailable: ") + e.what() + "\n";
  }
  block += "recent:\n";
  for (const auto& l : recent_) block += "  " + l + "\n";
  // Up over the previous block, then each line cleared before it is written.
  if (drawn_lines_ > 0) err_ << "\033[" << drawn_lines_ << "A";
  int lines = 0;
  size_t p = 0;
  for (size_t q; (q = block.find('\n', p)) != std::string::npos; p = q + 1, ++lines)
    err_ << "\r\033[2K" << block.substr(p, q - p) << "\n";
  // Lines left over from a longer previous block.
  for (int i = lines; i < drawn_lines_; ++i) err_ << "\r\033[2K\n";
  if (drawn_lines_ > lines) err_ << "\033[" << (drawn_lines_ - lines) << "A";
  err_ << std::flush;
  drawn_lines_ = lines;
}

void SweepProgress::done() {
  if (mode_ == Mode::live) redraw();
}

}  // namespace kb

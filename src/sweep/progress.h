// How a running sweep shows itself.
//   live:   on a terminal, a block redrawn every second on stderr: the sweep status
//           (sweep/sweep_status.h: cells done / running / queued / failed, per-entrant passes,
//           tokens and dollars, elapsed and remaining time) and the last few events.
//   lines:  one plain line per event on stdout (CI logs), and the status line once a minute.
//   json:   one JSON object per event on stdout (--json-events), for dashboards.
#pragma once

#include <chrono>
#include <deque>
#include <iosfwd>
#include <string>

#include "store/sqlite.h"
#include "sweep/sweep_runner.h"

namespace kb {

class SweepProgress {
 public:
  enum class Mode { live, lines, json };
  SweepProgress(Mode mode, sql::Database& db, std::string sweep, std::ostream& out, std::ostream& err);
  void event(const SweepEvent& e);
  void tick();
  void done();  // leaves the last live block on screen

 private:
  void redraw();
  Mode mode_;
  sql::Database& db_;
  std::string sweep_;
  std::ostream& out_;
  std::ostream& err_;
  std::deque<std::string> recent_;
  int drawn_lines_ = 0;
  std::chrono::steady_clock::time_point last_line_status_ = std::chrono::steady_clock::now();
};

}  // namespace kb

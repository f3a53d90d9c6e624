// Text from agents is hostile until shown otherwise: it may hold HTML, script tags, terminal
// escape sequences or bytes that are not UTF-8. The site never interprets it: the page writers
// escape it (html_escape), the browser code inserts it as text, and these helpers make what cannot
// be shown as is visible instead of silently dropping it.
#pragma once

#include <string>
#include <string_view>

namespace kb::report {

// &, <, >, " and ' as entities: safe in element content and in quoted attribute values.
std::string html_escape(std::string_view s);
// html_escape, short for the page writers that call it on every value they write.
inline std::string esc(std::string_view s) { return html_escape(s); }

// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool valid_utf8(std::string_view s);

// `s` with every byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD.
std::string replace_invalid_utf8(std::string_view s);

struct ShownText {
  std::string text;
  bool had_invalid_utf8 = false;   // bytes were replaced by U+FFFD
  bool had_control = false;        // terminal escapes or other control characters were made visible
};

// What the site shows for an agent's text: invalid bytes replaced by U+FFFD, ESC shown as U+241B
// (so "\x1b[31m" reads "␛[31m" instead of colouring or vanishing), other C0 controls except tab
// and newline (and carriage return before a newline) as their U+2400 "control picture".
ShownText shown_text(std::string_view s);

}  // namespace kb::report

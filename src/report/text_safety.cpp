#include "report/text_safety.h"

namespace kb::report {

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

// Length of the well-formed UTF-8 sequence starting at s[i], or 0 when it is not one
// (Unicode 15, table 3-7 "Well-Formed UTF-8 Byte Sequences").
size_t utf8_sequence(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  const size_t left = s.size() - i;
  auto cont = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) { return b(i + k) >= lo && b(i + k) <= hi; };
  if (c >= 0xC2 && c <= 0xDF) return left >= 2 && cont(1) ? 2 : 0;
  if (c == 0xE0) return left >= 3 && cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return left >= 3 && cont(1) && cont(2) ? 3 : 0;
  if (c == 0xED) return left >= 3 && cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
  if (c == 0xF0) return left >= 4 && cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return left >= 4 && cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return left >= 4 && cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

void append_code_point(std::string& out, char32_t cp) {
  if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  }
  out += static_cast<char>(0x80 | (cp & 0x3F));
}

}  // namespace

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence(s, i);
    if (!n) return false;
    i += n;
  }
  return true;
}

std::string replace_invalid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence(s, i);
    if (n) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

ShownText shown_text(std::string_view s) {
  ShownText r;
  r.text.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence(s, i);
    if (!n) {
      r.text += "\xEF\xBF\xBD";
      r.had_invalid_utf8 = true;
      ++i;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const bool crlf = c == '\r' && i + 1 < s.size() && s[i + 1] == '\n';
    if ((c < 0x20 && c != '\t' && c != '\n' && !crlf) || c == 0x7F) {
      append_code_point(r.text, c == 0x7F ? 0x2421 : 0x2400 + c);  // U+241B for ESC, U+2421 for DEL
      r.had_control = true;
    } else {
      r.text.append(s.substr(i, n));
    }
    i += n;
  }
  return r;
}

}  // namespace kb::report

#include "agent/gateway/upstream_url.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <memory>
#include <stdexcept>

namespace kb::gateway {

namespace {

using CurlUrl = std::unique_ptr<CURLU, decltype(&curl_url_cleanup)>;

// Part of a parsed URL; empty when the URL has none.
std::string part(CURLU* u, CURLUPart which) {
  char* s = nullptr;
  if (curl_url_get(u, which, &s, 0) != CURLUE_OK || !s) return "";
  std::string out(s);
  curl_free(s);
  return out;
}

CurlUrl parse_url(const std::string& url) {
  CurlUrl u(curl_url(), &curl_url_cleanup);
  if (!u) throw std::runtime_error("libcurl could not allocate a URL handle");
  // No scheme guessing, no default scheme: only what the text says.
  if (const CURLUcode rc = curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0); rc != CURLUE_OK)
    throw std::invalid_argument(fmt::format("'{}' is not a URL libcurl accepts ({})", url, curl_url_strerror(rc)));
  return u;
}

bool path_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
         c == '~' || c == ':';
}

bool query_char(char c) { return path_char(c) || c == '=' || c == '&' || c == '%' || c == '+' || c == ',' || c == '/'; }

}  // namespace

UpstreamBase UpstreamBase::parse(std::string_view text) {
  std::string url(text);
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
    throw std::invalid_argument(fmt::format("forward upstream '{}': expected an http:// or https:// base URL", text));
  CurlUrl u = parse_url(url);
  UpstreamBase b;
  b.scheme_ = part(u.get(), CURLUPART_SCHEME);
  b.host_ = part(u.get(), CURLUPART_HOST);
  b.port_ = part(u.get(), CURLUPART_PORT);
  if (b.host_.empty()) throw std::invalid_argument(fmt::format("forward upstream '{}': no host", text));
  if (!part(u.get(), CURLUPART_USER).empty() || !part(u.get(), CURLUPART_PASSWORD).empty())
    throw std::invalid_argument(fmt::format("forward upstream '{}': a user or password in the URL is refused "
                                            "(give the key with --upstream-key-env)", text));
  if (!part(u.get(), CURLUPART_QUERY).empty() || !part(u.get(), CURLUPART_FRAGMENT).empty())
    throw std::invalid_argument(fmt::format("forward upstream '{}': a base URL has no query or fragment", text));
  b.base_ = url;
  return b;
}

std::string UpstreamBase::url_for(std::string_view target) const {
  const size_t q = target.find('?');
  const std::string_view path = target.substr(0, q);
  const std::string_view query = q == std::string_view::npos ? std::string_view{} : target.substr(q + 1);
  if (path.empty() || path.front() != '/') throw std::invalid_argument("the request target does not start with '/'");
  for (size_t start = 1; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view seg = path.substr(start, end - start);
    if (seg.empty() && end != path.size()) throw std::invalid_argument("the request path has an empty segment ('//')");
    if (seg == "." || seg == "..") throw std::invalid_argument("the request path has a '.' or '..' segment");
    for (char c : seg)
      if (!path_char(c))
        throw std::invalid_argument(fmt::format("the request path has a character the gateway does not forward (byte 0x{:02x})",
                                                static_cast<unsigned char>(c)));
    start = end + 1;
  }
  for (char c : query)
    if (!query_char(c))
      throw std::invalid_argument(fmt::format("the request query has a character the gateway does not forward (byte 0x{:02x})",
                                              static_cast<unsigned char>(c)));
  const std::string url = base_ + std::string(target);
  // Belt and braces: whatever the checks above let through must still land on the upstream.
  CurlUrl u = parse_url(url);
  if (part(u.get(), CURLUPART_SCHEME) != scheme_ || part(u.get(), CURLUPART_HOST) != host_ ||
      part(u.get(), CURLUPART_PORT) != port_ || !part(u.get(), CURLUPART_USER).empty() ||
      !part(u.get(), CURLUPART_FRAGMENT).empty())
    throw std::invalid_argument("the request would leave the upstream host");
  return url;
}

}  // namespace kb::gateway

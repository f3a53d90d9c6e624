// Where forward mode sends a request (docs/gateway.md, "What forward mode sends where"): the
// upstream's scheme, host and port, fixed when the gateway starts, and a path built from the
// request's target only after that target has been validated. The URL is assembled with libcurl's
// URL API and its host compared with the upstream's, so no request target (`@evil.example/x`,
// `//evil.example`, `/../`, a backslash, an encoded dot) can send the provider key elsewhere.
#pragma once

#include <string>
#include <string_view>

namespace kb::gateway {

class UpstreamBase {
 public:
  // An http:// or https:// base URL, with an optional path prefix (https://openrouter.ai/api);
  // no user or password, query or fragment. Throws std::invalid_argument naming the URL and what is
  // wrong with it.
  static UpstreamBase parse(std::string_view url);

  // The URL for a request target (path and optional query, as the client sent it), always on the
  // upstream's own scheme, host and port. Throws std::invalid_argument saying why the target is
  // refused: the path must be '/'-separated segments of letters, digits and `-._~:` (no empty, `.`
  // or `..` segment, no percent-encoding); the query may add `=&%+,` and nothing that could end it
  // (no `#`, `@`, `\`, space or control byte).
  std::string url_for(std::string_view target) const;

  const std::string& base() const { return base_; }  // scheme://host[:port][/prefix], no trailing '/'
  const std::string& host() const { return host_; }

 private:
  std::string base_, scheme_, host_, port_;
};

}  // namespace kb::gateway

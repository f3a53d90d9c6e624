// Forward mode's URL building (agent/gateway/upstream_url.h): every request target that could move
// the request, and the provider key with it, off the upstream host is refused; ordinary API paths
// keep the upstream's path prefix.
#include <gtest/gtest.h>

#include "agent/gateway/api.h"
#include "agent/gateway/upstream_url.h"

using kb::gateway::UpstreamBase;

TEST(GatewayUpstreamUrl, OrdinaryTargetsKeepTheUpstreamAndItsPrefix) {
  const auto b = UpstreamBase::parse("https://openrouter.ai/api/");
  EXPECT_EQ(b.base(), "https://openrouter.ai/api");
  EXPECT_EQ(b.url_for("/v1/chat/completions"), "https://openrouter.ai/api/v1/chat/completions");
  const auto g = UpstreamBase::parse("http://127.0.0.1:8080");
  EXPECT_EQ(g.url_for("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=AIza-x_y"),
            "http://127.0.0.1:8080/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=AIza-x_y");
  EXPECT_EQ(g.url_for("/v1/messages?beta=true"), "http://127.0.0.1:8080/v1/messages?beta=true");
}

TEST(GatewayUpstreamUrl, TargetsThatCouldLeaveTheUpstreamAreRefused) {
  const auto b = UpstreamBase::parse("http://upstream.example:8080");
  for (const char* t : {"@127.0.0.1:18082/steal", "@evil.example/x", "//evil.example/x", "/v1/../../x", "/v1/./x",
                        "/v1/%2e%2e/x", "/v1\\@evil.example/x", "/v1/messages#@evil.example", "/v1/messages?x=1#frag",
                        "/v1/mess ages", "/v1/messages?a=@evil.example", "", "v1/messages", "/v1/\x01"}) {
    EXPECT_THROW(b.url_for(t), std::invalid_argument) << "target '" << t << "' was accepted";
  }
}

TEST(GatewayUpstreamUrl, BadBaseUrlsAreRefusedWithTheUrlNamed) {
  for (const char* u : {"ftp://x.example", "upstream.example", "http://user:pw@x.example", "http://x.example/?q=1",
                        "http://x.example/#f", "http://"}) {
    try {
      UpstreamBase::parse(u);
      ADD_FAILURE() << "base '" << u << "' was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("'"), std::string::npos) << e.what();
    }
  }
}

TEST(GatewayEndpoints, OnlyKnownFreeEndpointsAreAuxiliary) {
  using kb::gateway::auxiliary_request;
  EXPECT_TRUE(auxiliary_request("POST", "/v1/messages/count_tokens"));
  EXPECT_TRUE(auxiliary_request("GET", "/v1/models"));
  EXPECT_TRUE(auxiliary_request("GET", "/v1/models/gpt-5"));
  EXPECT_TRUE(auxiliary_request("POST", "/v1beta/models/gemini-2.5-pro:countTokens"));
  for (const auto& [m, p] : std::vector<std::pair<const char*, const char*>>{
           {"POST", "/v1/messages/"}, {"POST", "/v1/messages/batches"}, {"POST", "/v1/complete"}, {"POST", "/v1/models"},
           {"GET", "/v1/models/a/b"}, {"DELETE", "/v1/models/x"}, {"GET", "/v1/files"}, {"POST", "/v1/embeddings"},
           {"GET", "/v1beta/models/g:generateContent"}}) {
    EXPECT_FALSE(auxiliary_request(m, p)) << m << " " << p;
    EXPECT_FALSE(kb::gateway::classify_request(m, p).has_value()) << m << " " << p;
  }
}

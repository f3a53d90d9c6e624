// The model gateway on loopback only: replay mode answering Anthropic (streamed and not) and Chat
// Completions requests from a script, the usage and cost it logs, budgets, loud failures, and
// forward mode against a local "upstream" server (no internet), streamed chunk by chunk. No
// credential ever reaches the log.
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <condition_variable>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/gateway/api.h"
#include "agent/gateway/gateway.h"
#include "agent_test_util.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace kb::gateway;

namespace {

const std::string kClientKey = "sk-ant-client-SECRET-0123456789";
const std::string kBearer = "sk-openai-client-SECRET-abcdef";
const std::string kUpstreamKey = "sk-upstream-REAL-KEY-987654321";

struct Reply {
  long status = 0;
  std::string body;
  std::vector<std::string> chunks;  // as libcurl delivered them
};

size_t on_data(char* d, size_t s, size_t n, void* u) {
  auto* r = static_cast<std::pair<Reply*, std::function<void(const std::string&)>*>*>(u);
  r->first->body.append(d, s * n);
  r->first->chunks.emplace_back(d, s * n);
  if (*r->second) (*r->second)(std::string(d, s * n));
  return s * n;
}

Reply post(const std::string& url, const json& body, std::vector<std::string> headers,
           std::function<void(const std::string&)> on_chunk = {}) {
  Reply r;
  CURL* c = curl_easy_init();
  curl_slist* h = nullptr;
  headers.push_back("Content-Type: application/json");
  for (const auto& x : headers) h = curl_slist_append(h, x.c_str());
  const std::string data = body.dump();
  std::pair<Reply*, std::function<void(const std::string&)>*> ctx{&r, &on_chunk};
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, data.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &ctx);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  const CURLcode rc = curl_easy_perform(c);
  EXPECT_EQ(rc, CURLE_OK) << curl_easy_strerror(rc);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  return r;
}

std::vector<json> log_lines(const fs::path& p) {
  std::vector<json> out;
  std::ifstream in(p);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(json::parse(l));
  return out;
}

void write(const fs::path& p, const std::string& s) { std::ofstream(p) << s; }

// One request written byte for byte on a socket (libcurl and httplib's client would normalize the
// target); returns the response's status code, 0 when there is none.
int raw_request(int port, const std::string& method, const std::string& target, const std::string& extra_headers = "",
                const std::string& body = "") {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return 0;
  }
  timeval tv{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + extra_headers +
                          "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  (void)!::write(fd, req.data(), req.size());
  std::string resp;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) resp.append(buf, static_cast<size_t>(n));
  close(fd);
  int status = 0;
  if (resp.rfind("HTTP/1.1 ", 0) == 0) status = std::atoi(resp.c_str() + 9);
  return status;
}

// Test-only prices (not real ones): easy numbers to check the arithmetic with.
const char* kPrices = R"TOML(
[models."claude-test"]
input = 3.0
output = 15.0
cache_read = 0.30
cache_write = 3.75
source = "kbench test fixture (made-up numbers)"

[models."gpt-test"]
input = 1.25
output = 10.0
cache_read = 0.125
source = "kbench test fixture (made-up numbers)"
)TOML";

json anthropic_request(bool stream) {
  return {{"model", "claude-test"}, {"max_tokens", 64}, {"stream", stream},
          {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}};
}

}  // namespace

TEST(Gateway, ReplayAnswersAnthropicAndChatWithScriptedContentAndLogsUsageAndCost) {
  const fs::path root = kbtest::scratch("gw-replay");
  write(root / "script.json", json::array({
      {{"api", "anthropic_messages"}, {"text", "Hello from turn one."},
       {"usage", {{"input_tokens", 100}, {"output_tokens", 20}, {"cache_read_tokens", 1000}, {"cache_write_tokens", 200}}}},
      {{"api", "anthropic_messages"}, {"text", "Streamed turn two."},
       {"usage", {{"input_tokens", 10}, {"output_tokens", 30}, {"cache_read_tokens", 1200}}}},
      {{"api", "openai_chat"}, {"text", "Chat turn three."},
       {"usage", {{"input_tokens", 50}, {"output_tokens", 40}, {"cache_read_tokens", 400}, {"reasoning_tokens", 25}}}},
  }).dump(1));
  write(root / "prices.toml", kPrices);
  GatewayOptions o;
  o.mode = GatewayOptions::Mode::replay;
  o.replay_file = root / "script.json";
  o.prices_file = root / "prices.toml";
  o.log_file = root / "gateway.jsonl";
  Gateway gw(o);
  gw.start();
  const std::string base = gw.base_url();
  ASSERT_EQ(base.rfind("http://127.0.0.1:", 0), 0u) << base;

  // 1. Anthropic, not streamed.
  Reply a = post(base + "/v1/messages", anthropic_request(false), {"x-api-key: " + kClientKey, "anthropic-version: 2023-06-01"});
  ASSERT_EQ(a.status, 200) << a.body;
  const json ab = json::parse(a.body);
  EXPECT_EQ(ab["content"][0]["text"], "Hello from turn one.");
  EXPECT_EQ(ab["usage"]["input_tokens"], 100);
  EXPECT_EQ(ab["usage"]["cache_read_input_tokens"], 1000);
  EXPECT_EQ(ab["usage"]["cache_creation_input_tokens"], 200);

  // 2. Anthropic, streamed: well-formed SSE whose text deltas carry the scripted text.
  Reply s = post(base + "/v1/messages", anthropic_request(true), {"x-api-key: " + kClientKey});
  ASSERT_EQ(s.status, 200) << s.body;
  std::string text;
  std::vector<std::string> names;
  for (const auto& e : parse_sse(s.body)) {
    names.push_back(e.event);
    const json d = json::parse(e.data);
    if (d["type"] == "content_block_delta") text += d["delta"]["text"].get<std::string>();
  }
  EXPECT_EQ(text, "Streamed turn two.");
  EXPECT_EQ(names, (std::vector<std::string>{"message_start", "content_block_start", "content_block_delta", "content_block_stop",
                                             "message_delta", "message_stop"}));

  // 3. Chat Completions (OpenAI semantics: prompt_tokens include the cached ones).
  Reply c = post(base + "/v1/chat/completions", {{"model", "gpt-test"}, {"messages", json::array()}},
                 {"Authorization: Bearer " + kBearer});
  ASSERT_EQ(c.status, 200) << c.body;
  const json cb = json::parse(c.body);
  EXPECT_EQ(cb["choices"][0]["message"]["content"], "Chat turn three.");
  EXPECT_EQ(cb["usage"]["prompt_tokens"], 450);
  EXPECT_EQ(cb["usage"]["prompt_tokens_details"]["cached_tokens"], 400);
  gw.stop();

  const auto log = log_lines(o.log_file);
  ASSERT_EQ(log.size(), 3u);
  // Normalized usage equals what the script served, for all three.
  EXPECT_EQ(log[0]["usage"], json({{"input_tokens", 100}, {"output_tokens", 20}, {"cache_read_tokens", 1000}, {"cache_write_tokens", 200}}));
  EXPECT_EQ(log[1]["usage"], json({{"input_tokens", 10}, {"output_tokens", 30}, {"cache_read_tokens", 1200}}));
  EXPECT_EQ(log[2]["usage"], json({{"input_tokens", 50}, {"output_tokens", 40}, {"cache_read_tokens", 400}, {"reasoning_tokens", 25}}));
  EXPECT_EQ(log[1]["stream"], true);
  EXPECT_EQ(log[2]["api"], "openai_chat");
  // Costs from the table: (100*3 + 20*15 + 1000*0.3 + 200*3.75)/1e6 = 0.00165, ...
  EXPECT_NEAR(log[0]["cost_usd"].get<double>(), 0.00165, 1e-12);
  EXPECT_NEAR(log[1]["cost_usd"].get<double>(), (10 * 3.0 + 30 * 15.0 + 1200 * 0.3) / 1e6, 1e-12);
  EXPECT_NEAR(log[2]["cost_usd"].get<double>(), (50 * 1.25 + 40 * 10.0 + 400 * 0.125) / 1e6, 1e-12);
  EXPECT_NE(log[0]["cost_source"].get<std::string>().find("kbench test fixture"), std::string::npos) << log[0].dump();
  EXPECT_EQ(log[0]["request"]["redacted_headers"], json::array({"x-api-key"}));
  EXPECT_EQ(log[0]["request"]["headers"]["anthropic-version"], "2023-06-01");

  // Secrets never written.
  const std::string raw = kbtest::slurp(o.log_file);
  EXPECT_EQ(raw.find(kClientKey), std::string::npos);
  EXPECT_EQ(raw.find(kBearer), std::string::npos);
  EXPECT_EQ(raw.find("SECRET"), std::string::npos);

  // usage.json totals.
  const json u = usage_summary(o.log_file);
  EXPECT_EQ(u["exchanges"], 3);
  EXPECT_EQ(u["input_tokens"], 160);
  EXPECT_EQ(u["output_tokens"], 90);
  EXPECT_EQ(u["cache_read_tokens"], 2600);
  EXPECT_EQ(u["cache_write_tokens"], 200);
  EXPECT_EQ(u["reasoning_tokens"], 25);
  EXPECT_EQ(u["total_tokens"], 160 + 90 + 2600 + 200);
  EXPECT_NEAR(u["cost_usd"].get<double>(), 0.00165 + (30 + 450 + 360) / 1e6 + (62.5 + 400 + 50) / 1e6, 1e-12);
  EXPECT_EQ(u["cost_complete"], true);
  EXPECT_EQ(u["by_model"]["claude-test"]["exchanges"], 2);
  fs::remove_all(root);
}

TEST(Gateway, ReplayFailsLoudlyOnWrongKindAndWhenTheScriptRunsOut) {
  const fs::path root = kbtest::scratch("gw-loud");
  write(root / "script.jsonl",
        "# one turn a line\n" + json{{"api", "openai_chat"}, {"text", "only turn"}}.dump() + "\n");
  GatewayOptions o;
  o.replay_file = root / "script.jsonl";
  o.log_file = root / "gateway.jsonl";
  Gateway gw(o);
  gw.start();
  Reply wrong = post(gw.base_url() + "/v1/messages", anthropic_request(false), {});
  EXPECT_EQ(wrong.status, 500);
  const json wb = json::parse(wrong.body);
  EXPECT_EQ(wb["type"], "error");  // Anthropic's error format
  EXPECT_NE(wb["error"]["message"].get<std::string>().find("is for a openai_chat request, but the request is anthropic_messages"),
            std::string::npos) << wrong.body;
  Reply ok = post(gw.base_url() + "/v1/chat/completions", {{"model", "m"}, {"messages", json::array()}}, {});
  EXPECT_EQ(ok.status, 200) << "a refused request does not use up the turn: " << ok.body;
  Reply out = post(gw.base_url() + "/v1/chat/completions", {{"model", "m"}, {"messages", json::array()}}, {});
  EXPECT_EQ(out.status, 500);
  EXPECT_NE(json::parse(out.body)["error"]["message"].get<std::string>().find("has run out: all 1 turns were served"),
            std::string::npos) << out.body;
  gw.stop();
  const auto log = log_lines(o.log_file);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_TRUE(log[0].contains("error"));
  EXPECT_EQ(log[0]["response"]["status"], 500);
  EXPECT_FALSE(log[1].contains("error"));
  EXPECT_TRUE(log[2].contains("error"));
  EXPECT_EQ(usage_summary(o.log_file)["errors"], 2);

  // Script errors name the file, the turn and the field.
  write(root / "bad.json", R"([{"api":"openai_chat","text":"x"},{"api":"anthropic_messages","text":"y","usage":{"input_tokens":-3}}])");
  GatewayOptions b = o;
  b.replay_file = root / "bad.json";
  try {
    Gateway g(b);
    ADD_FAILURE() << "a bad script was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json turn 2.usage.input_tokens: expected a non-negative integer, found -3"),
              std::string::npos) << e.what();
  }
  write(root / "noprice.toml", "[models.\"x\"]\ninput = 1.0\noutput = 2.0\n");
  GatewayOptions c = o;
  c.prices_file = root / "noprice.toml";
  try {
    Gateway g(c);
    ADD_FAILURE() << "a price without a source was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("models.\"x\".source: missing"), std::string::npos) << e.what();
  }
  fs::remove_all(root);
}

TEST(Gateway, TokenAndCostBudgetsRefuseWithA429InTheProvidersFormat) {
  const fs::path root = kbtest::scratch("gw-budget");
  json turns = json::array();
  for (int i = 0; i < 3; ++i)
    turns.push_back({{"api", "anthropic_messages"}, {"text", "t"}, {"usage", {{"input_tokens", 600}, {"output_tokens", 100}}}});
  turns.push_back({{"api", "openai_chat"}, {"text", "c"}, {"usage", {{"input_tokens", 1}, {"output_tokens", 1}, {"cost_usd", 0.5}}}});
  write(root / "script.json", turns.dump());
  GatewayOptions o;
  o.replay_file = root / "script.json";
  o.log_file = root / "gateway.jsonl";
  o.max_tokens = 1000;
  {
    Gateway gw(o);
    gw.start();
    EXPECT_EQ(post(gw.base_url() + "/v1/messages", anthropic_request(false), {}).status, 200);  // 700 tokens used
    EXPECT_EQ(post(gw.base_url() + "/v1/messages", anthropic_request(true), {}).status, 200);   // 1400: over after this one
    Reply refused = post(gw.base_url() + "/v1/messages", anthropic_request(false), {});
    EXPECT_EQ(refused.status, 429);
    const json rb = json::parse(refused.body);
    EXPECT_EQ(rb["error"]["type"], "rate_limit_error");
    EXPECT_NE(rb["error"]["message"].get<std::string>().find("token budget exhausted (1400 of 1000 tokens used)"), std::string::npos);
    Reply chat = post(gw.base_url() + "/v1/chat/completions", {{"model", "m"}, {"messages", json::array()}}, {});
    EXPECT_EQ(chat.status, 429);
    EXPECT_EQ(json::parse(chat.body)["error"]["type"], "insufficient_quota");
  }
  auto log = log_lines(o.log_file);
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[2]["response"]["status"], 429);
  EXPECT_NE(log[2]["error"].get<std::string>().find("token budget"), std::string::npos);

  // A dollar budget, from the provider-reported cost (usage.cost, as OpenRouter reports it).
  write(root / "script2.json", json::array({turns[3], turns[3]}).dump());
  GatewayOptions d = o;
  d.max_tokens.reset();
  d.max_cost_usd = 0.4;
  d.replay_file = root / "script2.json";
  d.log_file = root / "gateway2.jsonl";
  {
    Gateway gw(d);
    gw.start();
    EXPECT_EQ(post(gw.base_url() + "/v1/chat/completions", {{"model", "m"}, {"messages", json::array()}}, {}).status, 200);
    Reply r = post(gw.base_url() + "/v1/chat/completions", {{"model", "m"}, {"messages", json::array()}}, {});
    EXPECT_EQ(r.status, 429);
    EXPECT_NE(r.body.find("cost budget exhausted ($0.500000 of $0.400000 spent)"), std::string::npos) << r.body;
  }
  log = log_lines(d.log_file);
  EXPECT_EQ(log[0]["cost_usd"], 0.5);
  EXPECT_EQ(log[0]["cost_source"], "provider (usage.cost)");
  fs::remove_all(root);
}

// The "upstream": a local httplib server. Its streamed answer sends an event, then waits until the
// test's client has received it before sending the next: a gateway that buffered the stream would
// stall it (and the upstream records the timeout).
TEST(Gateway, ForwardPassesSseThroughChunkByChunkAndPinsOpenRouterProviders) {
  const fs::path root = kbtest::scratch("gw-forward");
  httplib::Server up;
  std::mutex mu;
  std::condition_variable cv;
  int received = 0;          // events the test's client has seen
  int waits_timed_out = 0;   // upstream waits that the client never released
  json chat_body_seen;
  std::string auth_seen, key_seen;
  const int kEvents = 5;
  up.Post("/v1/messages", [&](const httplib::Request& req, httplib::Response& res) {
    key_seen = req.get_header_value("x-api-key");
    res.set_chunked_content_provider("text/event-stream", [&](size_t, httplib::DataSink& sink) {
      for (int i = 0; i < kEvents; ++i) {
        json d;
        if (i == 0)
          d = {{"type", "message_start"},
               {"message", {{"id", "m"}, {"model", "claude-test"}, {"usage", {{"input_tokens", 7}, {"cache_read_input_tokens", 70}, {"output_tokens", 1}}}}}};
        else if (i == kEvents - 1)
          d = {{"type", "message_delta"}, {"delta", {{"stop_reason", "end_turn"}}}, {"usage", {{"output_tokens", 42}}}};
        else
          d = {{"type", "content_block_delta"}, {"index", 0}, {"delta", {{"type", "text_delta"}, {"text", "part" + std::to_string(i)}}}};
        const std::string ev = format_sse({d["type"].get<std::string>(), d.dump()});
        if (!sink.write(ev.data(), ev.size())) return false;
        std::unique_lock lock(mu);
        if (!cv.wait_for(lock, std::chrono::seconds(5), [&] { return received > i; })) ++waits_timed_out;
      }
      sink.done();
      return true;
    });
  });
  up.Post("/v1/chat/completions", [&](const httplib::Request& req, httplib::Response& res) {
    chat_body_seen = json::parse(req.body);
    auth_seen = req.get_header_value("Authorization");
    res.set_content(json{{"id", "x"}, {"model", "gpt-test"},
                         {"choices", json::array({{{"index", 0}, {"message", {{"role", "assistant"}, {"content", "upstream says hi"}}}}})},
                         {"usage", {{"prompt_tokens", 30}, {"completion_tokens", 5}, {"prompt_tokens_details", {{"cached_tokens", 10}}}, {"cost", 0.00042}}}}
                        .dump(),
                    "application/json");
  });
  const int up_port = up.bind_to_any_port("127.0.0.1");
  ASSERT_GT(up_port, 0);
  std::thread up_thread([&] { up.listen_after_bind(); });

  setenv("KBENCH_TEST_UPSTREAM_KEY", kUpstreamKey.c_str(), 1);
  GatewayOptions o;
  o.mode = GatewayOptions::Mode::forward;
  o.upstream = "http://127.0.0.1:" + std::to_string(up_port);
  o.log_file = root / "gateway.jsonl";
  o.openrouter_order = {"anthropic", "google-vertex"};
  o.upstream_key_env = "KBENCH_TEST_UPSTREAM_KEY";
  write(root / "prices.toml", kPrices);
  o.prices_file = root / "prices.toml";
  Gateway gw(o);
  gw.start();

  int data_events = 0;
  std::string pending;
  Reply s = post(gw.base_url() + "/v1/messages", anthropic_request(true), {"x-api-key: " + kClientKey}, [&](const std::string& chunk) {
    pending += chunk;
    // Count complete events as they arrive and release the upstream for the next one.
    for (size_t p; (p = pending.find("\n\n")) != std::string::npos; pending.erase(0, p + 2)) {
      ++data_events;
      std::lock_guard lock(mu);
      received = data_events;
      cv.notify_all();
    }
  });
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(data_events, kEvents);
  EXPECT_EQ(waits_timed_out, 0) << "the gateway held events back instead of passing each through as it came";
  EXPECT_GE(s.chunks.size(), static_cast<size_t>(kEvents)) << "events arrived in separate chunks";
  EXPECT_EQ(key_seen, kUpstreamKey) << "the upstream got the gateway's key, not the client's";

  Reply c = post(gw.base_url() + "/v1/chat/completions", {{"model", "gpt-test"}, {"messages", json::array()}},
                 {"Authorization: Bearer " + kBearer});
  EXPECT_EQ(c.status, 200);
  EXPECT_EQ(json::parse(c.body)["choices"][0]["message"]["content"], "upstream says hi");
  EXPECT_EQ(chat_body_seen["provider"], json({{"order", {"anthropic", "google-vertex"}}, {"allow_fallbacks", false}}));
  EXPECT_EQ(auth_seen, "Bearer " + kUpstreamKey);
  gw.stop();
  up.stop();
  up_thread.join();
  unsetenv("KBENCH_TEST_UPSTREAM_KEY");

  const auto log = log_lines(o.log_file);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["usage"], json({{"input_tokens", 7}, {"output_tokens", 42}, {"cache_read_tokens", 70}}));
  EXPECT_NEAR(log[0]["cost_usd"].get<double>(), (7 * 3.0 + 42 * 15.0 + 70 * 0.3) / 1e6, 1e-12);
  EXPECT_EQ(log[0]["mode"], "forward");
  EXPECT_EQ(log[1]["usage"], json({{"input_tokens", 20}, {"output_tokens", 5}, {"cache_read_tokens", 10}}));
  EXPECT_EQ(log[1]["cost_usd"], 0.00042) << "OpenRouter's billed cost wins over the table";
  EXPECT_EQ(log[1]["cost_source"], "provider (usage.cost)");
  EXPECT_EQ(log[1]["request"]["modified"], json::array({"provider"}));
  const std::string raw = kbtest::slurp(o.log_file);
  for (const auto& secret : {kClientKey, kBearer, kUpstreamKey}) EXPECT_EQ(raw.find(secret), std::string::npos) << secret;
  fs::remove_all(root);
}

// Issue: a target not starting with '/' (`@127.0.0.1:PORT/steal`) was appended to the upstream URL,
// so curl sent the request, with the real key, to another host; POSTs to model endpoints the
// gateway did not classify (`/v1/messages/`, batches, legacy completions) were forwarded with the
// key, uncounted, even after the token budget was spent. Now the URL is built from a validated
// target on the upstream's host only, and only known endpoints are forwarded.
TEST(Gateway, ForwardNeverSendsTheKeyToAnotherHostNorToEndpointsItCannotCount) {
  const fs::path root = kbtest::scratch("gw-forward-rules");
  std::mutex mu;
  std::vector<std::string> thief_saw, upstream_saw;
  httplib::Server thief, up;
  auto record = [&mu](std::vector<std::string>& into) {
    return [&mu, &into](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu);
      into.push_back(req.method + " " + req.path + " key=" + req.get_header_value("x-api-key") +
                     " auth=" + req.get_header_value("Authorization"));
      res.set_content(json{{"id", "x"}, {"model", "claude-test"}, {"type", "message"}, {"role", "assistant"},
                           {"content", json::array({{{"type", "text"}, {"text", "hi"}}})},
                           {"usage", {{"input_tokens", 600}, {"output_tokens", 600}}}}
                          .dump(),
                      "application/json");
    };
  };
  thief.Get(".*", record(thief_saw));
  thief.Post(".*", record(thief_saw));
  up.Get(".*", record(upstream_saw));
  up.Post(".*", record(upstream_saw));
  const int thief_port = thief.bind_to_any_port("127.0.0.1"), up_port = up.bind_to_any_port("127.0.0.1");
  ASSERT_GT(thief_port, 0);
  ASSERT_GT(up_port, 0);
  std::thread thief_thread([&] { thief.listen_after_bind(); }), up_thread([&] { up.listen_after_bind(); });
  // stop() before a server's thread has entered its accept loop leaves that thread waiting forever
  // (the thief is never contacted, so under load its thread may not have run yet).
  while (!thief.is_running() || !up.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  setenv("KBENCH_TEST_UPSTREAM_KEY", kUpstreamKey.c_str(), 1);
  GatewayOptions o;
  o.mode = GatewayOptions::Mode::forward;
  o.upstream = "http://127.0.0.1:" + std::to_string(up_port);
  o.log_file = root / "gateway.jsonl";
  o.upstream_key_env = "KBENCH_TEST_UPSTREAM_KEY";
  o.max_tokens = 1000;
  Gateway gw(o);
  const int port = gw.start();
  const std::string key = "x-api-key: " + kClientKey + "\r\n";
  const std::string body = anthropic_request(false).dump();
  const std::string thief_at = "127.0.0.1:" + std::to_string(thief_port);

  // Targets that would leave the upstream: refused before any connection is made.
  for (const std::string& t : std::vector<std::string>{"@" + thief_at + "/steal", "@" + thief_at + "/v1/messages", "//" + thief_at + "/v1/messages",
                               "/v1/../../steal", "/v1/%2e%2e/messages"}) {
    for (const char* m : {"GET", "POST"}) {
      const int status = raw_request(port, m, t, m == std::string("POST") ? key : "", m == std::string("POST") ? body : "");
      EXPECT_TRUE(status == 400 || status == 404) << m << " " << t << " answered " << status;
    }
  }
  // Endpoints the gateway cannot count: refused, never forwarded.
  for (const char* t : {"/v1/messages/", "/v1/messages/batches", "/v1/complete", "/v1/embeddings"})
    EXPECT_EQ(raw_request(port, "POST", t, key, body), 404) << t;
  // Known free endpoints pass to the upstream with the gateway's key; a model call is counted.
  EXPECT_EQ(raw_request(port, "GET", "/v1/models"), 200);
  EXPECT_EQ(raw_request(port, "POST", "/v1/messages/count_tokens", key, body), 200);
  EXPECT_EQ(raw_request(port, "POST", "/v1/messages", key, body), 200);  // 1200 tokens: the budget is spent
  // Over the budget, everything is refused, free endpoints included.
  EXPECT_EQ(raw_request(port, "POST", "/v1/messages", key, body), 429);
  EXPECT_EQ(raw_request(port, "POST", "/v1/messages/count_tokens", key, body), 429);
  EXPECT_EQ(raw_request(port, "GET", "/v1/models"), 429);
  gw.stop();
  up.stop();
  thief.stop();
  up_thread.join();
  thief_thread.join();
  unsetenv("KBENCH_TEST_UPSTREAM_KEY");

  EXPECT_TRUE(thief_saw.empty()) << "the other host got: " << thief_saw.front();
  ASSERT_EQ(upstream_saw.size(), 3u);
  EXPECT_EQ(upstream_saw[0], "GET /v1/models key= auth=Bearer " + kUpstreamKey);
  EXPECT_EQ(upstream_saw[1], "POST /v1/messages/count_tokens key=" + kUpstreamKey + " auth=");
  EXPECT_EQ(upstream_saw[2], "POST /v1/messages key=" + kUpstreamKey + " auth=");
  // Every exchange, refused ones included, is in the log, which holds no key.
  const auto log = log_lines(o.log_file);
  EXPECT_EQ(log.size(), 10u + 4u + 3u + 3u);
  int refused = 0;
  for (const auto& r : log)
    if (r["response"]["status"].get<int>() >= 400) ++refused;
  EXPECT_EQ(refused, 10 + 4 + 3);
  const std::string raw = kbtest::slurp(o.log_file);
  for (const auto& secret : {kClientKey, kUpstreamKey}) EXPECT_EQ(raw.find(secret), std::string::npos) << secret;
  fs::remove_all(root);
}

TEST(Gateway, UsageNormalizationPerProvider) {
  // OpenAI Responses: input_tokens include cached; reasoning is part of output.
  auto r = normalize_usage(ApiKind::openai_responses,
                           {{"input_tokens", 1000}, {"input_tokens_details", {{"cached_tokens", 800}}}, {"output_tokens", 300},
                            {"output_tokens_details", {{"reasoning_tokens", 200}}}});
  EXPECT_EQ(r.input_tokens, 200);
  EXPECT_EQ(r.cache_read_tokens, 800);
  EXPECT_EQ(r.output_tokens, 300);
  EXPECT_EQ(r.reasoning_tokens, 200);
  // Gemini: candidates exclude thoughts; prompt includes cached content.
  auto g = normalize_usage(ApiKind::gemini, {{"promptTokenCount", 500}, {"cachedContentTokenCount", 100}, {"candidatesTokenCount", 40},
                                             {"thoughtsTokenCount", 60}});
  EXPECT_EQ(g.input_tokens, 400);
  EXPECT_EQ(g.cache_read_tokens, 100);
  EXPECT_EQ(g.output_tokens, 100);
  EXPECT_EQ(g.reasoning_tokens, 60);
  // OpenRouter Chat with cache writes: prompt_tokens include both cache reads and writes.
  auto o = normalize_usage(ApiKind::openai_chat, {{"prompt_tokens", 1000}, {"completion_tokens", 10},
                                                  {"prompt_tokens_details", {{"cached_tokens", 600}, {"cache_write_tokens", 300}}}});
  EXPECT_EQ(o.input_tokens, 100);
  EXPECT_EQ(o.cache_read_tokens, 600);
  EXPECT_EQ(o.cache_write_tokens, 300);
}

#include "agent/gateway/gateway.h"

#include <curl/curl.h>
#include <fmt/format.h>
#include <httplib.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include "agent/gateway/api.h"
#include "agent/gateway/prices.h"
#include "agent/gateway/replay.h"
#include "agent/gateway/upstream_url.h"
#include "core/json_text.h"
#include "store/run_dir.h"

namespace kb::gateway {
namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Headers whose values are credentials: never written to the log, never shown.
bool secret_header(const std::string& name) {
  const std::string n = lower(name);
  return n == "authorization" || n == "x-api-key" || n == "x-goog-api-key" || n == "api-key" || n == "proxy-authorization" ||
         n == "cookie" || n == "set-cookie";
}

// Hop-by-hop and framing headers the gateway sets itself.
bool framing_header(const std::string& name) {
  const std::string n = lower(name);
  return n == "host" || n == "content-length" || n == "connection" || n == "transfer-encoding" || n == "accept-encoding" ||
         n == "content-encoding" || n == "keep-alive" || n == "upgrade" || n == "te" || n == "trailer" ||
         n == "proxy-connection" || n == "remote_addr" || n == "remote_port" || n == "local_addr" || n == "local_port";
}

// key=VALUE in a query string (Gemini's API key) becomes key=[redacted].
std::string redact_query(std::string target) {
  for (const char* k : {"key=", "api_key=", "apikey="}) {
    size_t pos = 0;
    while ((pos = target.find(k, pos)) != std::string::npos) {
      if (pos > 0 && target[pos - 1] != '?' && target[pos - 1] != '&') {
        pos += 1;
        continue;
      }
      const size_t v = pos + std::strlen(k), end = target.find('&', v);
      target.replace(v, (end == std::string::npos ? target.size() : end) - v, "[redacted]");
      pos = v;
    }
  }
  return target;
}

json body_for_log(const std::string& text) {
  if (text.empty()) return nullptr;
  json j = json::parse(text, nullptr, false);
  return j.is_discarded() ? json(text) : j;
}

struct Exchange {
  uint64_t seq = 0;
  std::chrono::system_clock::time_point started;
  Clock::time_point t0;
  std::string method, path, target;
  std::string url;  // forward mode: the upstream URL, built from the validated target
  std::optional<ApiKind> kind;
  bool stream = false;
  std::string model;
  json request_headers = json::object();
  json redacted = json::array();
  json request_body;
  std::vector<std::string> modified;  // what forward mode changed in the body
  std::vector<std::string> secrets;   // credential values seen in this request
};

size_t curl_write(char* data, size_t size, size_t n, void* user);
size_t curl_header(char* data, size_t size, size_t n, void* user);

// One upstream request through libcurl's multi interface, driven from the handler's thread so
// that a streamed answer goes to the client chunk by chunk as it arrives.
struct Upstream {
  CURLM* multi = nullptr;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::string request_body;
  long status = 0;
  bool headers_done = false;
  std::vector<std::pair<std::string, std::string>> response_headers;
  std::string pending;   // received, not yet given to the client
  std::string captured;  // the whole response, for the log
  bool finished = false;
  CURLcode result = CURLE_OK;
  char error[CURL_ERROR_SIZE] = {0};

  ~Upstream() {
    if (multi && easy) curl_multi_remove_handle(multi, easy);
    if (easy) curl_easy_cleanup(easy);
    if (multi) curl_multi_cleanup(multi);
    if (headers) curl_slist_free_all(headers);
  }
  // Runs until `until()` holds or the transfer ends; false when it ended.
  bool pump(const std::function<bool()>& until) {
    while (!finished) {
      if (until()) return true;
      int running = 0;
      curl_multi_perform(multi, &running);
      int queued = 0;
      while (CURLMsg* m = curl_multi_info_read(multi, &queued))
        if (m->msg == CURLMSG_DONE) {
          result = m->data.result;
          finished = true;
        }
      if (!finished && !until()) curl_multi_poll(multi, nullptr, 0, 100, nullptr);
    }
    return until();
  }
};

size_t curl_write(char* data, size_t size, size_t n, void* user) {
  auto* u = static_cast<Upstream*>(user);
  u->pending.append(data, size * n);
  u->captured.append(data, size * n);
  return size * n;
}

size_t curl_header(char* data, size_t size, size_t n, void* user) {
  auto* u = static_cast<Upstream*>(user);
  std::string line(data, size * n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  if (line.rfind("HTTP/", 0) == 0) {
    u->response_headers.clear();
    u->headers_done = false;
  } else if (line.empty()) {
    long code = 0;
    curl_easy_getinfo(u->easy, CURLINFO_RESPONSE_CODE, &code);
    if (code >= 200) {  // not an interim 1xx
      u->status = code;
      u->headers_done = true;
    }
  } else if (const size_t c = line.find(':'); c != std::string::npos) {
    std::string v = line.substr(c + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    u->response_headers.emplace_back(line.substr(0, c), v);
  }
  return size * n;
}

std::once_flag curl_once;

}  // namespace

GatewayOptions parse_gateway_spec(const std::string& spec) {
  GatewayOptions o;
  if (spec.rfind("replay:", 0) == 0 && spec.size() > 7) {
    o.mode = GatewayOptions::Mode::replay;
    o.replay_file = spec.substr(7);
  } else if (spec.rfind("forward:", 0) == 0 && spec.size() > 8) {
    o.mode = GatewayOptions::Mode::forward;
    o.upstream = spec.substr(8);
  } else {
    throw std::invalid_argument("--gateway '" + spec + "': expected replay:FILE or forward:URL");
  }
  return o;
}

struct Gateway::Impl {
  GatewayOptions o;
  std::optional<ReplayScript> script;
  PriceTable prices;
  std::string upstream_key;
  std::optional<UpstreamBase> upstream;  // forward mode
  httplib::Server srv;
  std::thread thread;
  int port = 0;
  std::atomic<uint64_t> seq{0};
  std::mutex log_mu;
  std::ofstream log;
  std::mutex budget_mu;
  int64_t spent_tokens = 0;
  double spent_usd = 0;
  bool cost_unknown = false;  // an exchange could not be priced: the dollar budget cannot be trusted

  void handle(const httplib::Request& req, httplib::Response& res);
  void reply_error(Exchange& ex, httplib::Response& res, int status, const std::string& type, const std::string& message);
  void finish(Exchange& ex, int status, const std::string& response, const std::string& error);
  std::string over_budget();
  void serve_replay(Exchange& ex, const httplib::Request& req, httplib::Response& res);
  void serve_forward(std::shared_ptr<Exchange> ex, const httplib::Request& req, httplib::Response& res);
};

Gateway::Gateway(GatewayOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& g = *impl_;
  g.o = std::move(options);
  if (g.o.log_file.empty()) throw std::invalid_argument("the gateway needs a log file");
  if (g.o.mode == GatewayOptions::Mode::replay) {
    g.script = ReplayScript::load(g.o.replay_file, g.o.replay_vars);
  } else {
    g.upstream = UpstreamBase::parse(g.o.upstream);
    if (!g.o.upstream_key_env.empty()) {
      const char* k = std::getenv(g.o.upstream_key_env.c_str());
      if (!k || !*k)
        throw std::invalid_argument("--upstream-key-env " + g.o.upstream_key_env + ": that environment variable is not set");
      g.upstream_key = k;
    }
  }
  if (!g.o.prices_file.empty()) g.prices = PriceTable::load(g.o.prices_file);
  if (g.o.max_tokens && *g.o.max_tokens <= 0) throw std::invalid_argument("--max-tokens must be positive");
  if (g.o.max_cost_usd && !(*g.o.max_cost_usd > 0)) throw std::invalid_argument("--max-cost must be positive");
  if (!g.o.log_file.parent_path().empty()) fs::create_directories(g.o.log_file.parent_path());
  g.log.open(g.o.log_file, std::ios::app);
  if (!g.log) throw std::invalid_argument("gateway log " + g.o.log_file.string() + ": cannot be written");
  std::call_once(curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });

  auto handler = [&g](const httplib::Request& req, httplib::Response& res) { g.handle(req, res); };
  g.srv.Post(".*", handler);
  g.srv.Get(".*", handler);
  g.srv.Put(".*", handler);
  g.srv.Delete(".*", handler);
  g.srv.set_read_timeout(std::chrono::minutes(5));
  g.srv.set_write_timeout(std::chrono::minutes(5));
}

Gateway::~Gateway() { stop(); }

int Gateway::start() {
  Impl& g = *impl_;
  g.port = g.o.port ? (g.srv.bind_to_port(g.o.host.c_str(), g.o.port) ? g.o.port : -1) : g.srv.bind_to_any_port(g.o.host.c_str());
  if (g.port <= 0) throw std::runtime_error(fmt::format("the gateway cannot listen on {}:{}", g.o.host, g.o.port));
  g.thread = std::thread([&g] { g.srv.listen_after_bind(); });
  // stop() is a no-op on a server not yet running, so start() returns only once it is.
  for (int i = 0; i < 5000 && !g.srv.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!g.srv.is_running()) throw std::runtime_error("the gateway did not start listening within 5 s");
  return g.port;
}

void Gateway::stop() {
  if (!impl_) return;
  impl_->srv.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::string Gateway::base_url() const { return fmt::format("http://{}:{}", impl_->o.host, impl_->port); }
int Gateway::port() const { return impl_->port; }

std::string Gateway::Impl::over_budget() {
  std::lock_guard lock(budget_mu);
  if (o.max_tokens && spent_tokens >= *o.max_tokens)
    return fmt::format("kbench gateway: token budget exhausted ({} of {} tokens used)", spent_tokens, *o.max_tokens);
  if (o.max_cost_usd && spent_usd >= *o.max_cost_usd)
    return fmt::format("kbench gateway: cost budget exhausted (${:.6f} of ${:.6f} spent)", spent_usd, *o.max_cost_usd);
  if (o.max_cost_usd && cost_unknown)
    return "kbench gateway: cost budget cannot be enforced: an earlier exchange could not be priced (see the log's cost_note)";
  return "";
}

void Gateway::Impl::finish(Exchange& ex, int status, const std::string& response, const std::string& error) {
  json rec = {{"seq", ex.seq},
              {"time", iso_utc(ex.started)},
              {"duration_s", std::chrono::duration<double>(Clock::now() - ex.t0).count()},
              {"mode", o.mode == GatewayOptions::Mode::replay ? "replay" : "forward"},
              {"api", ex.kind ? json(api_kind_name(*ex.kind)) : json(nullptr)},
              {"method", ex.method},
              {"path", redact_query(ex.target)},
              {"stream", ex.stream},
              {"model", ex.model.empty() ? json(nullptr) : json(ex.model)},
              {"request", {{"headers", ex.request_headers}, {"redacted_headers", ex.redacted}, {"body", ex.request_body}}},
              {"response", {{"status", status}}}};
  if (!ex.modified.empty()) rec["request"]["modified"] = ex.modified;
  if (ex.stream && status < 300 && error.empty()) rec["response"]["events"] = response;
  else rec["response"]["body"] = body_for_log(response);
  if (!error.empty()) rec["error"] = error;
  std::optional<Usage> u;
  if (ex.kind && status < 300 && error.empty()) {
    if (ex.stream) u = usage_from_stream(*ex.kind, response);
    else u = usage_from_body(*ex.kind, body_for_log(response));
  }
  if (u) {
    json uj = usage_to_json(*u);
    uj.erase("cost_usd");
    rec["usage"] = uj;
    std::string response_model;
    const json b = body_for_log(response);
    if (b.is_object() && b.contains("model") && b["model"].is_string()) response_model = b["model"].get<std::string>();
    const Cost c = prices.cost(*u, {ex.model, response_model});
    rec["cost_usd"] = c.usd ? json(*c.usd) : json(nullptr);
    if (!c.source.empty()) rec["cost_source"] = c.source;
    if (!c.note.empty()) rec["cost_note"] = c.note;
    std::lock_guard lock(budget_mu);
    spent_tokens += u->input_tokens.value_or(0) + u->output_tokens.value_or(0) + u->cache_read_tokens.value_or(0) +
                    u->cache_write_tokens.value_or(0);
    if (c.usd) spent_usd += *c.usd;
    else cost_unknown = true;
    rec["budget"] = {{"tokens_used", spent_tokens}, {"usd_spent", spent_usd}};
  } else if (ex.kind && status < 300 && error.empty()) {
    rec["usage"] = nullptr;
    rec["usage_note"] = "the response reported no usage";
  }
  std::string line = json_text(rec, -1);
  // Belt and braces: no credential seen in this exchange, nor the upstream key, survives anywhere
  // in the line (a body or an error that echoes it).
  std::vector<std::string> secrets = ex.secrets;
  if (!upstream_key.empty()) secrets.push_back(upstream_key);
  for (const auto& s : secrets) {
    if (s.size() < 8) continue;
    for (size_t p; (p = line.find(s)) != std::string::npos;) line.replace(p, s.size(), "[redacted]");
  }
  std::lock_guard lock(log_mu);
  log << line << "\n";
  log.flush();
}

void Gateway::Impl::reply_error(Exchange& ex, httplib::Response& res, int status, const std::string& type,
                                const std::string& message) {
  const json body = ex.kind ? error_body(*ex.kind, status, type, message) : json{{"error", {{"type", type}, {"message", message}}}};
  res.status = status;
  res.set_content(body.dump(), "application/json");
  finish(ex, status, body.dump(), message);
}

void Gateway::Impl::handle(const httplib::Request& req, httplib::Response& res) {
  auto ex = std::make_shared<Exchange>();
  ex->seq = ++seq;
  ex->started = std::chrono::system_clock::now();
  ex->t0 = Clock::now();
  ex->method = req.method;
  ex->path = req.path;
  ex->target = req.target.empty() ? req.path : req.target;
  for (const auto& [k, v] : req.headers) {
    if (secret_header(k)) {
      ex->redacted.push_back(lower(k));
      std::string s = v;
      if (lower(s).rfind("bearer ", 0) == 0) s = s.substr(7);
      ex->secrets.push_back(s);
    } else if (!framing_header(k)) {
      ex->request_headers[lower(k)] = v;
    }
  }
  if (const size_t q = ex->target.find("key="); q != std::string::npos) {
    const size_t end = ex->target.find('&', q);
    ex->secrets.push_back(ex->target.substr(q + 4, end == std::string::npos ? std::string::npos : end - q - 4));
  }
  ex->request_body = body_for_log(req.body);
  ex->kind = classify_request(req.method, req.path);
  const bool replay = o.mode == GatewayOptions::Mode::replay;
  if (!ex->kind && (replay || !auxiliary_request(req.method, req.path)))
    return reply_error(*ex, res, 404, "not_found_error",
                       fmt::format("kbench gateway: {} {} is not a request this gateway {} (model calls: POST .../messages, "
                                   ".../chat/completions, .../responses, .../models/M:generateContent{})",
                                   req.method, req.path, replay ? "serves" : "forwards",
                                   replay ? "" : "; also token counting and GET .../models"));
  if (!replay) {
    try {
      ex->url = upstream->url_for(ex->target);
    } catch (const std::invalid_argument& e) {
      return reply_error(*ex, res, 400, "invalid_request_error", fmt::format("kbench gateway: refused: {}", e.what()));
    }
  }
  if (!ex->kind) {
    // Free, usage-less requests (token counting, model lists), still refused once the budget is spent.
    if (std::string why = over_budget(); !why.empty()) return reply_error(*ex, res, 429, "rate_limit_error", why);
    return serve_forward(ex, req, res);
  }
  const json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return reply_error(*ex, res, 400, "invalid_request_error", "kbench gateway: the request body is not a JSON object");
  ex->stream = request_streams(*ex->kind, req.path, body);
  ex->model = request_model(*ex->kind, req.path, body);
  if (std::string why = over_budget(); !why.empty())
    return reply_error(*ex, res, 429, ex->kind == ApiKind::anthropic_messages ? "rate_limit_error" : "insufficient_quota", why);
  if (replay) return serve_replay(*ex, req, res);
  serve_forward(ex, req, res);
}

void Gateway::Impl::serve_replay(Exchange& ex, const httplib::Request& req, httplib::Response& res) {
  ReplayResponse r;
  try {
    const size_t q = ex.target.find('?');
    r = script->next(*ex.kind, ex.stream, ex.model, q == std::string::npos ? "" : ex.target.substr(q + 1), req.body);
  } catch (const ReplayError& e) {
    return reply_error(ex, res, 500, ex.kind == ApiKind::anthropic_messages ? "api_error" : "server_error", e.what());
  }
  res.status = r.status;
  if (r.chunks.empty()) {
    res.set_content(r.body, r.content_type);
    finish(ex, r.status, r.body, "");
    return;
  }
  auto chunks = std::make_shared<std::vector<std::string>>(std::move(r.chunks));
  auto exp = std::make_shared<Exchange>(ex);
  auto body = std::make_shared<std::string>(std::move(r.body));
  const int status = r.status;
  res.set_chunked_content_provider(r.content_type, [this, chunks, exp, body, status](size_t, httplib::DataSink& sink) {
    for (const auto& c : *chunks)
      if (!sink.write(c.data(), c.size())) {
        finish(*exp, status, *body, "the client closed the connection during the stream");
        return false;
      }
    // Counted before the stream's end reaches the client: its next request must see this
    // exchange's tokens in the budget (done() first let a quick client slip one request past it).
    finish(*exp, status, *body, "");
    sink.done();
    return true;
  });
}

void Gateway::Impl::serve_forward(std::shared_ptr<Exchange> ex, const httplib::Request& req, httplib::Response& res) {
  auto up = std::make_shared<Upstream>();
  up->request_body = req.body;
  if (ex->kind && (req.method == "POST")) {
    json body = json::parse(req.body);
    if (ex->kind == ApiKind::openai_chat && !o.openrouter_order.empty()) {
      body["provider"] = {{"order", o.openrouter_order}, {"allow_fallbacks", false}};
      ex->modified.push_back("provider");
    }
    if (ex->kind == ApiKind::openai_chat && ex->stream &&
        !(body.contains("stream_options") && body["stream_options"].is_object() &&
          body["stream_options"].value("include_usage", false))) {
      body["stream_options"]["include_usage"] = true;  // the usage chunk the log counts
      ex->modified.push_back("stream_options.include_usage");
    }
    if (!ex->modified.empty()) {
      up->request_body = body.dump();
      ex->request_body = body;
    }
  }
  up->multi = curl_multi_init();
  up->easy = curl_easy_init();
  const std::string& url = ex->url;
  bool had_auth = false;
  for (const auto& [k, v] : req.headers) {
    if (framing_header(k)) continue;
    if (secret_header(k) && !upstream_key.empty()) {
      had_auth = true;
      const std::string n = lower(k);
      const std::string value = n == "authorization" ? "Bearer " + upstream_key : upstream_key;
      up->headers = curl_slist_append(up->headers, (k + ": " + value).c_str());
      continue;
    }
    up->headers = curl_slist_append(up->headers, (k + ": " + v).c_str());
  }
  if (!upstream_key.empty() && !had_auth) {
    const std::string h = ex->kind == ApiKind::anthropic_messages ? "x-api-key: " + upstream_key
                          : ex->kind == ApiKind::gemini           ? "x-goog-api-key: " + upstream_key
                                                                  : "Authorization: Bearer " + upstream_key;
    up->headers = curl_slist_append(up->headers, h.c_str());
  }
  up->headers = curl_slist_append(up->headers, "Expect:");
  curl_easy_setopt(up->easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(up->easy, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  if (req.method != "GET") {
    curl_easy_setopt(up->easy, CURLOPT_POSTFIELDS, up->request_body.data());
    curl_easy_setopt(up->easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(up->request_body.size()));
  }
  curl_easy_setopt(up->easy, CURLOPT_HTTPHEADER, up->headers);
  curl_easy_setopt(up->easy, CURLOPT_WRITEFUNCTION, curl_write);
  curl_easy_setopt(up->easy, CURLOPT_WRITEDATA, up.get());
  curl_easy_setopt(up->easy, CURLOPT_HEADERFUNCTION, curl_header);
  curl_easy_setopt(up->easy, CURLOPT_HEADERDATA, up.get());
  curl_easy_setopt(up->easy, CURLOPT_ERRORBUFFER, up->error);
  curl_easy_setopt(up->easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(up->easy, CURLOPT_CONNECTTIMEOUT, 30L);
  curl_easy_setopt(up->easy, CURLOPT_TIMEOUT, static_cast<long>(o.upstream_timeout.count()));
  curl_easy_setopt(up->easy, CURLOPT_ACCEPT_ENCODING, nullptr);  // identity: the log reads the body
  curl_multi_add_handle(up->multi, up->easy);

  if (!up->pump([&] { return up->headers_done; }) && (up->result != CURLE_OK || !up->headers_done)) {
    const std::string why = fmt::format("kbench gateway: upstream {} failed: {}", url,
                                        up->error[0] ? up->error : curl_easy_strerror(up->result));
    return reply_error(*ex, res, 502, ex->kind == ApiKind::anthropic_messages ? "api_error" : "server_error", why);
  }
  std::string content_type = "application/octet-stream";
  for (const auto& [k, v] : up->response_headers) {
    if (lower(k) == "content-type") content_type = v;
    else if (!framing_header(k) && !secret_header(k)) res.set_header(k, v);
  }
  res.status = static_cast<int>(up->status);
  const bool sse = content_type.find("text/event-stream") != std::string::npos;
  if (!sse || !ex->kind) {
    up->pump([] { return false; });
    if (up->result != CURLE_OK) {
      const std::string why = fmt::format("kbench gateway: upstream {} failed mid-response: {}", url,
                                          up->error[0] ? up->error : curl_easy_strerror(up->result));
      return reply_error(*ex, res, 502, ex->kind == ApiKind::anthropic_messages ? "api_error" : "server_error", why);
    }
    res.set_content(up->captured, content_type);
    ex->stream = ex->stream && up->status < 300 && sse;
    finish(*ex, res.status, up->captured, "");
    return;
  }
  const int status = res.status;
  res.set_chunked_content_provider(content_type, [this, up, ex, status](size_t, httplib::DataSink& sink) {
    bool client_gone = false;
    auto flush = [&] {
      if (up->pending.empty() || client_gone) return;
      if (!sink.write(up->pending.data(), up->pending.size())) client_gone = true;
      up->pending.clear();
    };
    flush();
    while (!client_gone && !up->finished) {
      up->pump([&] { return !up->pending.empty(); });
      flush();
    }
    std::string error;
    if (client_gone) error = "the client closed the connection during the stream";
    else if (up->result != CURLE_OK)
      error = fmt::format("upstream stream broke: {}", up->error[0] ? up->error : curl_easy_strerror(up->result));
    // A broken stream is logged with what arrived; its usage is still counted when it came. Counted
    // before the stream's end reaches the client, so that its next request sees it in the budget.
    finish(*ex, status, up->captured, "");
    if (error.empty()) {
      sink.done();
      return true;
    }
    std::lock_guard lock(log_mu);
    log << json{{"seq", ex->seq}, {"error", error}}.dump() << "\n";
    log.flush();
    return false;
  });
}

json usage_summary(const fs::path& log_file) {
  json totals = {{"input_tokens", 0}, {"output_tokens", 0}, {"cache_read_tokens", 0}, {"cache_write_tokens", 0},
                 {"reasoning_tokens", 0}};
  json by_model = json::object();
  double cost = 0;
  int64_t exchanges = 0, errors = 0, without_usage = 0, unpriced = 0;
  std::ifstream in(log_file);
  if (!in) throw std::invalid_argument("gateway log " + log_file.string() + ": cannot be read");
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const json r = json::parse(line, nullptr, false);
    if (r.is_discarded() || !r.is_object() || !r.contains("seq"))
      throw std::invalid_argument(fmt::format("{}:{}: not a gateway log record", log_file.string(), n));
    if (!r.contains("response")) {  // a note about an earlier exchange (a broken stream)
      ++errors;
      continue;
    }
    ++exchanges;
    if (r.contains("error")) ++errors;
    if (!r.contains("api") || r["api"].is_null() || r.contains("error")) continue;
    if (!r.contains("usage") || r["usage"].is_null()) {
      ++without_usage;
      continue;
    }
    const std::string model = r["model"].is_string() ? r["model"].get<std::string>() : "(unnamed)";
    json& m = by_model[model];
    if (m.is_null()) m = {{"exchanges", 0}, {"input_tokens", 0}, {"output_tokens", 0}, {"cache_read_tokens", 0},
                          {"cache_write_tokens", 0}, {"reasoning_tokens", 0}, {"cost_usd", 0.0}};
    m["exchanges"] = m["exchanges"].get<int64_t>() + 1;
    for (const auto& [k, v] : r["usage"].items()) {
      totals[k] = totals[k].get<int64_t>() + v.get<int64_t>();
      m[k] = m[k].get<int64_t>() + v.get<int64_t>();
    }
    if (r.contains("cost_usd") && r["cost_usd"].is_number()) {
      cost += r["cost_usd"].get<double>();
      m["cost_usd"] = m["cost_usd"].get<double>() + r["cost_usd"].get<double>();
    } else {
      ++unpriced;
    }
  }
  json out = {{"schema", "kbench.usage/1"}, {"log", log_file.string()}, {"exchanges", exchanges}, {"errors", errors},
              {"exchanges_without_usage", without_usage}, {"exchanges_unpriced", unpriced}};
  out.update(totals);
  out["total_tokens"] = totals["input_tokens"].get<int64_t>() + totals["output_tokens"].get<int64_t>() +
                        totals["cache_read_tokens"].get<int64_t>() + totals["cache_write_tokens"].get<int64_t>();
  out["cost_usd"] = cost;
  out["cost_complete"] = unpriced == 0;
  out["by_model"] = by_model;
  return out;
}

}  // namespace kb::gateway

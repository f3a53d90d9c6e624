#include "agent/loop/chat_client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <mutex>
#include <thread>

#include "core/json_text.h"

namespace kb::loop {
using json = nlohmann::json;

namespace {

std::once_flag curl_once;

size_t append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

struct Attempt {
  long status = 0;         // 0: no HTTP answer (connection failed)
  std::string body;
  std::string transport_error;
};

Attempt post(const std::string& url, const std::string& key, const std::string& body, std::chrono::seconds timeout) {
  Attempt a;
  CURL* c = curl_easy_init();
  if (!c) {
    a.transport_error = "curl_easy_init failed";
    return a;
  }
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  if (!key.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + key).c_str());
  char err[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, append);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &a.body);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, static_cast<long>(timeout.count()));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
  const CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a.status);
  else a.transport_error = err[0] ? err : curl_easy_strerror(rc);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  return a;
}

// The provider's error message, from {"error":{"message":...}} or the body itself.
std::string error_message(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error")) {
    const json& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
    if (e.is_string()) return e.get<std::string>();
  }
  return body.size() > 500 ? body.substr(0, 500) + "..." : body;
}

}  // namespace

ChatClient::ChatClient(ChatClientOptions o) : o_(std::move(o)) {
  if (o_.base_url.rfind("http://", 0) != 0 && o_.base_url.rfind("https://", 0) != 0)
    throw std::invalid_argument("chat endpoint '" + o_.base_url + "': expected an http:// or https:// base URL");
  std::string base = o_.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  endpoint_ = base + "/chat/completions";
  std::call_once(curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

json ChatClient::complete(const json& request) const {
  const std::string body = json_text(request, -1);
  auto backoff = o_.first_backoff;
  for (int attempt = 0;; ++attempt) {
    const Attempt a = post(endpoint_, o_.api_key, body, o_.request_timeout);
    if (a.status >= 200 && a.status < 300) {
      json j = json::parse(a.body, nullptr, false);
      if (!j.is_object()) throw ChatError(fmt::format("{}: the answer is not a JSON object: {}", endpoint_, error_message(a.body)));
      return j;
    }
    // 429 (rate limit) and 5xx are the provider's "try again"; other 4xx will not get better. A
    // 429 that is a spent budget (the gateway's) does not get better either, but costs only the
    // few retries.
    const bool retry = a.status == 0 || a.status == 429 || a.status >= 500;
    const std::string what = a.status == 0 ? "no answer (" + a.transport_error + ")"
                                           : fmt::format("HTTP {}: {}", a.status, error_message(a.body));
    if (!retry || attempt >= o_.max_retries)
      throw ChatError(fmt::format("{}: {}{}", endpoint_, what, retry ? fmt::format(" (after {} retries)", attempt) : ""));
    std::this_thread::sleep_for(backoff);
    backoff *= 2;
  }
}

}  // namespace kb::loop

// `kbench site serve`: serves a built site over HTTP on the local machine (cpp-httplib), for
// reading it in a browser; the site works from file:// too, this is a convenience.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

namespace kb::report {

// Serves `root` at http://host:port/ until the process is stopped. `on_listening` is called with
// the URL once the socket listens (port 0 picks a free port). Throws std::runtime_error when the
// address cannot be bound or `root` is not a built site.
void serve_site(const std::filesystem::path& root, const std::string& host, int port,
                const std::function<void(const std::string& url)>& on_listening);

}  // namespace kb::report

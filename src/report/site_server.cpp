#include "report/site_server.h"

#include <stdexcept>

#include <httplib.h>

namespace kb::report {
namespace fs = std::filesystem;

void serve_site(const fs::path& root, const std::string& host, int port, const std::function<void(const std::string&)>& on_listening) {
  std::error_code ec;
  if (!fs::is_regular_file(root / "index.html", ec))
    throw std::runtime_error(root.string() + " holds no index.html: build the site first (kbench site build --out " + root.string() + ")");
  httplib::Server srv;
  // Only files under root are served (cpp-httplib refuses paths with ".." itself).
  if (!srv.set_mount_point("/", root.string())) throw std::runtime_error("cannot serve " + root.string());
  srv.set_file_extension_and_mimetype_mapping("js", "text/javascript; charset=utf-8");
  srv.set_file_extension_and_mimetype_mapping("json", "application/json; charset=utf-8");
  srv.set_file_extension_and_mimetype_mapping("svg", "image/svg+xml");
  const int bound = port == 0 ? srv.bind_to_any_port(host) : (srv.bind_to_port(host, port) ? port : -1);
  if (bound < 0) throw std::runtime_error("cannot listen on " + host + ":" + std::to_string(port) + " (in use? try --port 0)");
  on_listening("http://" + host + ":" + std::to_string(bound) + "/");
  srv.listen_after_bind();
}

}  // namespace kb::report

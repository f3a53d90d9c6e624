#include "core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kb {

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  write_file_atomically(path, std::vector<std::string_view>{text});
}

void write_file_atomically(const std::filesystem::path& path, const std::vector<std::string_view>& pieces) {
  // The pid in the temporary name keeps two processes writing the same file from sharing it.
  const std::string tmp = path.string() + ".tmp." + std::to_string(getpid());
  auto fail = [&](const std::string& what) {
    const std::string msg = what + " " + tmp + ": " + std::strerror(errno);
    unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + path.string() + " (" + msg + ")");
  };
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("open");
  for (std::string_view text : pieces) {
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = write(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        close(fd);
        fail("write");
      }
      done += static_cast<size_t>(n);
    }
  }
  // Without the fsync a crash after the rename could leave an empty file under the final name.
  if (fsync(fd) != 0) {
    close(fd);
    fail("fsync");
  }
  if (close(fd) != 0) fail("close");
  if (rename(tmp.c_str(), path.c_str()) != 0) fail("rename to " + path.string() + " from");
}

}  // namespace kb

// The host-side integrity checks (docs/threat-model.md): HMAC-tagged channel frames, the static
// scan, the exported-symbol rule.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <fcntl.h>
#include <openssl/hmac.h>
#include <unistd.h>

#include <cstring>

#include <filesystem>
#include <fstream>
#include <thread>

#include <toml++/toml.h>

#include "deck/problem.h"
#include "eval/static_scan.h"
#include "protocol/channel.h"

namespace fs = std::filesystem;
using namespace kb;

namespace {

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    if (pipe(fds) == 0) r = fds[0], w = fds[1];
  }
  ~Pipe() {
    if (r >= 0) close(r);
    if (w >= 0) close(w);
  }
};

TEST(Channel, TaggedFramesVerifyAndForgedOnesAreRefused) {
  Pipe p;
  ChannelAuth send{random_channel_key(), 0, true}, recv = send;
  std::vector<std::byte> payload(1000, std::byte{7});
  send_message(p.w, {{"rc", 0}}, payload.data(), payload.size(), &send);
  Message m = receive_message(p.r, std::chrono::seconds(5), &recv);
  EXPECT_EQ(m.header["rc"], 0);
  EXPECT_EQ(m.payload, payload);
  // A frame written without the key (zero tag), as a solution writing on fd 4 would.
  send_message(p.w, {{"rc", 0}, {"samples", {1e-6}}});
  EXPECT_THROW(receive_message(p.r, std::chrono::seconds(5), &recv), ChannelForged);
}

TEST(Channel, AReplayedGenuineFrameIsRefused) {
  Pipe p;
  ChannelAuth send{random_channel_key(), 0, true}, recv = send;
  ChannelAuth replay = send;  // the same key and sequence: the frame a replay would copy
  send_message(p.w, {{"rc", 0}}, nullptr, 0, &send);
  receive_message(p.r, std::chrono::seconds(5), &recv);
  send_message(p.w, {{"rc", 0}}, nullptr, 0, &replay);  // sequence 0 again
  EXPECT_THROW(receive_message(p.r, std::chrono::seconds(5), &recv), ChannelForged);
}

// The raw bytes of one frame as send_message writes it, read from the pipe by hand.
std::vector<unsigned char> raw_frame(int fd) {
  std::vector<unsigned char> frame;
  auto take = [&](size_t n) {
    const size_t at = frame.size();
    frame.resize(at + n);
    for (size_t got = 0; got < n;) {
      const ssize_t r = read(fd, frame.data() + at + got, n - got);
      if (r <= 0) throw std::runtime_error("short frame");
      got += static_cast<size_t>(r);
    }
    return frame.data() + at;
  };
  uint32_t hn = 0;
  std::memcpy(&hn, take(sizeof hn), sizeof hn);
  take(hn);
  uint64_t pn = 0;
  std::memcpy(&pn, take(sizeof pn), sizeof pn);
  take(static_cast<size_t>(pn) + 32);
  return frame;
}

// A payload of several of the pieces the channel writes, reads and MACs in turn (4 MiB each, the
// last one partial): its tag is HMAC-SHA256 over sequence || the whole frame, as one call of
// OpenSSL's HMAC computes it, and a byte changed in its last piece is refused.
TEST(Channel, APayloadOfManyPiecesCarriesTheOneShotTagAndAChangedByteIsRefused) {
  ChannelAuth send{random_channel_key(), 0, true}, recv = send;
  std::vector<std::byte> payload((size_t{9} << 20) + 123);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::byte>((i * 131) >> 3);
  Pipe a;
  std::vector<unsigned char> frame;
  std::thread reader([&] { frame = raw_frame(a.r); });
  send_message(a.w, {{"rc", 0}}, payload.data(), payload.size(), &send);
  reader.join();
  ASSERT_EQ(frame.size(), 4 + std::string(R"({"rc":0})").size() + 8 + payload.size() + 32);
  std::vector<unsigned char> mac_input(8, 0);  // sequence number 0, little-endian
  mac_input.insert(mac_input.end(), frame.begin(), frame.end() - 32);
  unsigned char want[32];
  unsigned int len = 0;
  ASSERT_NE(HMAC(EVP_sha256(), send.key.data(), static_cast<int>(send.key.size()), mac_input.data(), mac_input.size(),
                 want, &len),
            nullptr);
  ASSERT_EQ(len, 32u);
  EXPECT_EQ(std::memcmp(want, frame.data() + frame.size() - 32, 32), 0);

  // The frame as sent verifies and carries the payload; with one payload byte changed it does not.
  auto deliver = [&](const std::vector<unsigned char>& f, ChannelAuth& auth) {
    Pipe b;
    std::thread writer([&] { (void)!write(b.w, f.data(), f.size()); });
    struct Join {
      std::thread& t;
      ~Join() { t.join(); }
    } join{writer};
    return receive_message(b.r, std::chrono::seconds(30), &auth);
  };
  ChannelAuth recv_tampered = recv;
  EXPECT_EQ(deliver(frame, recv).payload, payload);
  std::vector<unsigned char> tampered = frame;
  tampered[tampered.size() - 32 - 5] ^= 1;
  EXPECT_THROW(deliver(tampered, recv_tampered), ChannelForged);
}

// The reply pipe is widened to 1 MiB where the kernel allows it (the unprivileged maximum is
// /proc/sys/fs/pipe-max-size), and a tagged frame of many pieces crosses the widened pipe intact.
TEST(Channel, TheReplyPipeIsWidenedAndCarriesFramesIntact) {
  Pipe a;
  const int before = fcntl(a.w, F_GETPIPE_SZ);
  const size_t after = widen_pipe(a.w);
  EXPECT_EQ(after, static_cast<size_t>(fcntl(a.w, F_GETPIPE_SZ)));
  size_t max_size = 0;
  std::ifstream("/proc/sys/fs/pipe-max-size") >> max_size;
  if (max_size >= (size_t{1} << 20)) EXPECT_EQ(after, size_t{1} << 20) << "64 KiB was " << before;
  EXPECT_GE(after, static_cast<size_t>(before));

  ChannelAuth send{random_channel_key(), 0, true}, recv = send;
  std::vector<std::byte> payload((size_t{5} << 20) + 7);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::byte>(i * 2654435761u >> 24);
  std::thread writer([&] { send_message(a.w, {{"rc", 0}}, payload.data(), payload.size(), &send); });
  const Message m = receive_message(a.r, std::chrono::seconds(30), &recv, payload.size());
  writer.join();
  EXPECT_EQ(m.payload, payload);
}

TEST(Channel, KeyHexRoundTrip) {
  auto k = random_channel_key();
  EXPECT_EQ(channel_key_from_hex(to_hex(k.data(), k.size())), k);
}

TEST(StaticScan, CommentsAreIgnoredStringsAreNot) {
  const std::string s = strip_comments("a // fork()\nb /* dlsym */ c \"/proc/self\" 'x' R\"(// kept)\"\n");
  EXPECT_EQ(s.find("fork"), std::string::npos);
  EXPECT_EQ(s.find("dlsym"), std::string::npos);
  EXPECT_NE(s.find("/proc/self"), std::string::npos);
  EXPECT_NE(s.find("// kept"), std::string::npos);
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 2);
}

fs::path write_solution(const std::string& name, const std::string& text) {
  const fs::path d = fs::temp_directory_path() / ("kbench-scan-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  std::ofstream(d / "solution.cpp") << text;
  return d;
}

TEST(StaticScan, TamperingPatternsAreFoundWithFileAndLine) {
  const auto d = write_solution("tamper",
                                "#include <omp.h>\n"
                                "// fork() in a comment is fine\n"
                                "void f() { pid_t p = fork(); }\n"
                                "void g() { void* s = dlsym(nullptr, \"x\"); }\n"
                                "extern \"C\" int cudaMalloc(void** p, size_t n) { return 0; }\n"
                                "void h() { std::thread t([]{}); setenv(\"LD_PRELOAD\", \"x\", 1); }\n"
                                "void k() { x.clone(); if (cudaMalloc(&p, 4)) {} }\n"
                                "#pragma omp parallel for\n");
  const auto hits = static_scan(d, {});
  std::vector<int> lines;
  for (const auto& h : hits) lines.push_back(h.line);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), 3), 1);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), 4), 1);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), 5), 1);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), 6), 3);  // thread, setenv, LD_PRELOAD
  EXPECT_EQ(std::count(lines.begin(), lines.end(), 7), 0);  // a method named clone, a call
  EXPECT_EQ(std::count(lines.begin(), lines.end(), 2), 0);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), 8), 0);  // OpenMP is allowed
  EXPECT_EQ(hits.front().file, "solution.cpp");
  fs::remove_all(d);
}

TEST(StaticScan, ProblemPatternsAreRegexesOrLiterals) {
  const auto d = write_solution("policy", "#include <cudnn.h>\nint x = a[(;\n");
  EXPECT_EQ(static_scan(d, {"cudnn"}).size(), 1u);
  EXPECT_EQ(static_scan(d, {"a[("}).size(), 1u);  // not a valid regex: taken literally
  EXPECT_TRUE(static_scan(d, {"cublas"}).empty());
  fs::remove_all(d);
}

TEST(StaticScan, NoHonestSolutionOfTheCorpusTripsIt) {
  for (const auto& p : fs::directory_iterator(fs::path(KBENCH_SOURCE_DIR) / "problems"))
    if (fs::is_directory(p.path() / "solutions"))
      for (const auto& s : fs::directory_iterator(p.path() / "solutions"))
        if (s.path().filename().string().rfind("exploit-", 0) != 0 && s.path().filename().string().rfind("bad-", 0) != 0)
          EXPECT_TRUE(static_scan(s.path(), {}).empty()) << s.path() << describe_hits(static_scan(s.path(), {}));
}

// An exploit is there to meet a later check (the filter, poisoning, the re-checks, the channel's
// HMAC...): one that the static scan already stopped would prove nothing about that check. Every
// exploit of the corpus whose expect.toml names another reason passes the scan, with its problem's
// own forbidden patterns (the cuda ones included: the scan needs no GPU).
TEST(StaticScan, NoExploitMeantForALaterCheckTripsIt) {
  int exploits = 0;
  for (const auto& p : fs::directory_iterator(fs::path(KBENCH_SOURCE_DIR) / "problems")) {
    if (!fs::is_directory(p.path() / "solutions")) continue;
    const kb::Problem problem = kb::load_problem(p.path());
    for (const auto& s : fs::directory_iterator(p.path() / "solutions")) {
      if (s.path().filename().string().rfind("exploit-", 0) != 0) continue;
      const auto expect = toml::parse_file((s.path() / "expect.toml").string());
      if (expect["failure"].value_or(std::string()) == "forbidden_source") continue;
      ++exploits;
      const auto hits = static_scan(s.path(), problem.forbidden);
      EXPECT_TRUE(hits.empty()) << s.path() << describe_hits(hits);
    }
  }
  EXPECT_GE(exploits, 40);
}

TEST(ExportedSymbols, TheRule) {
  for (const char* ok : {"kb_setup", "kb_run", "kb_teardown", "_edata", "_ZNSt11unique_lockISt5mutexE6unlockEv"})
    EXPECT_EQ(symbol_violation(ok), "") << ok;
  for (const char* bad : {"cudaMalloc", "cuLaunchKernel", "__cudaRegisterFatBinary", "dlsym", "pthread_create",
                          "clock_gettime", "helper", "_ZN2kb11buffer_hashEPKvmm"})
    EXPECT_NE(symbol_violation(bad), "") << bad;
  EXPECT_EQ(symbol_violation("cubic"), symbol_violation("helper"));  // lower case after "cu": not CUDA, still refused
}

TEST(ExportedSymbols, ReadFromTheDynamicTableLikeTheLoader) {
  const fs::path dir = fs::temp_directory_path() / ("kbench-elf-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "a.cpp") << "extern \"C\" __attribute__((visibility(\"default\"))) int kb_run() { return 0; }\n"
                                   "extern \"C\" __attribute__((visibility(\"default\"))) int cudaFree(void*) { return 0; }\n"
                                   "extern \"C\" int hidden_helper() { return 1; }\n";
  const std::string cmd = "g++ -shared -fPIC -fvisibility=hidden -o " + (dir / "a.so").string() + " " + (dir / "a.cpp").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const auto names = exported_symbols(dir / "a.so");
  EXPECT_NE(std::find(names.begin(), names.end(), "kb_run"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "cudaFree"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "hidden_helper"), names.end());
  EXPECT_THROW(exported_symbols(dir / "a.cpp"), std::runtime_error);
  fs::remove_all(dir);
}

}  // namespace

#include "worker/syscall_filter.h"

#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

static_assert(SIGSYS == kb::kSandboxSignal, "SIGSYS is not 31 on this platform");

namespace kb {

void install_worker_sandbox(bool forbid_new_executable_memory) {
  std::unique_ptr<void, void (*)(scmp_filter_ctx)> ctx(seccomp_init(SCMP_ACT_ALLOW), seccomp_release);
  if (!ctx) throw std::runtime_error("seccomp_init failed");
  scmp_filter_ctx f = ctx.get();
  auto check = [](int rc, const char* what) {
    if (rc < 0) throw std::runtime_error(std::string("seccomp rule for ") + what + ": " + strerror(-rc));
  };
  const uint32_t kill = SCMP_ACT_KILL_PROCESS;
  // New processes and programs.
  for (int nr : {SCMP_SYS(fork), SCMP_SYS(vfork), SCMP_SYS(execve), SCMP_SYS(execveat)})
    check(seccomp_rule_add(f, kill, nr, 0), "fork/vfork/execve");
  // clone: a thread (CLONE_THREAD set) is allowed, anything else is a new process.
  check(seccomp_rule_add(f, kill, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)), "clone");
  // clone3 passes its flags in memory, which a filter cannot read: refuse it softly (ENOSYS), and
  // glibc's pthread_create falls back to clone.
  check(seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0), "clone3");
  // Other processes' memory.
  for (int nr : {SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev), SCMP_SYS(pidfd_getfd),
                 SCMP_SYS(kcmp)})
    check(seccomp_rule_add(f, kill, nr, 0), "ptrace/process_vm");
  // Signals to other processes: only this process may be signalled.
  const auto self = static_cast<scmp_datum_t>(getpid());
  // libseccomp allows one comparison per argument in a rule, so kill(0, sig) (the own process
  // group) is refused as well; glibc's raise() and abort() use tgkill on the own process.
  check(seccomp_rule_add(f, kill, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_NE, self)), "kill");
  check(seccomp_rule_add(f, kill, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_NE, self)), "tgkill");
  check(seccomp_rule_add(f, kill, SCMP_SYS(tkill), 0), "tkill");
  if (forbid_new_executable_memory) {
    // Any PROT_EXEC: refusing only PROT_WRITE|PROT_EXEC together would let a page go writable
    // and then executable in two calls.
    const scmp_datum_t x = PROT_EXEC;
    check(seccomp_rule_add(f, kill, SCMP_SYS(mmap), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, x, x)), "mmap");
    check(seccomp_rule_add(f, kill, SCMP_SYS(mprotect), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, x, x)), "mprotect");
    check(seccomp_rule_add(f, kill, SCMP_SYS(pkey_mprotect), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, x, x)), "pkey_mprotect");
  }
  // All threads (OpenMP's pool, the CUDA runtime's) get the filter, not only the calling one.
  check(seccomp_attr_set(f, SCMP_FLTATR_CTL_TSYNC, 1), "TSYNC");
  check(seccomp_attr_set(f, SCMP_FLTATR_CTL_NNP, 1), "no_new_privs");
  check(seccomp_load(f), "load");
}

}  // namespace kb

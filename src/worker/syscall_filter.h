// The worker's system-call filter (seccomp-bpf, docs/threat-model.md), installed after kb_setup
// and before the first kb_run, so that the solution's own initialisation and the CUDA runtime's
// (which starts threads and maps memory) are done when it takes effect.
#pragma once

#include <string>

namespace kb {

// Installs the filter in the calling process, for all its threads (TSYNC). A forbidden call kills
// the whole worker with SIGSYS, which the parent reports as `sandbox_violation`:
//  - new processes: fork/vfork, clone without CLONE_THREAD, execve/execveat (clone3 fails with
//    ENOSYS instead, so that glibc falls back to clone, whose flags the filter can read: threads
//    stay allowed, since the host target allows OpenMP and the CUDA runtime has its own);
//  - ptrace, process_vm_readv/writev, pidfd_getfd, kcmp: reading or writing another process;
//  - kill/tkill/tgkill aimed at another process (the parent, kbench's other workers);
//  - with `forbid_new_executable_memory`, W^X from here on: no mapping becomes executable, so
//    mmap/mprotect/pkey_mprotect asking for PROT_EXEC are refused, writable and executable at once
//    or in turn (a page made writable to patch code, then executable again; generated machine
//    code). The libraries are loaded and relocated by then, and with full RELRO (-z relro -z now,
//    target/compile.h) their tables are read-only before the first call. Both targets: the CUDA
//    driver maps nothing executable after initialisation, a kernel's first launch under lazy
//    module loading included (its code goes to device memory; tests/gpu/test_cuda_write_xor_execute.cpp).
// Throws std::runtime_error when the kernel refuses the filter.
void install_worker_sandbox(bool forbid_new_executable_memory);

// The signal that a sandbox violation kills the worker with.
inline constexpr int kSandboxSignal = 31;  // SIGSYS on x86-64 and aarch64

}  // namespace kb

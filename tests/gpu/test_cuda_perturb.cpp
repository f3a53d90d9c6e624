// The timed-call perturbation on a real GPU moves the same bytes as the host's (core/perturb.h):
// the worker perturbs inputs on the device while the parent rebuilds a re-checked call's inputs on
// the host, so any difference would fail honest solutions as input_modified. Skipped (and reported
// skipped by ctest) without a GPU.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "core/perturb.h"
#include "target/cuda/cuda_device.h"
#include "target/target.h"

namespace {

TEST(CudaPerturb, DeviceSwapsAreTheHostsForEveryElementSizeAndUndoRestores) {
  if (!kb::cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
  kb::CudaDevice dev(0);
  // Many rows (more than one grid of the launcher), odd lengths, and rows of two.
  struct Case {
    int64_t rows, len;
  };
  for (const Case c : {Case{20000003 / 101, 101}, Case{70000, 2}, Case{3, 131072}, Case{1, 7}})
    for (int eb : {1, 2, 4, 8}) {
      const size_t bytes = static_cast<size_t>(c.rows * c.len * eb);
      std::vector<unsigned char> base(bytes);
      for (size_t i = 0; i < bytes; ++i) base[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
      const uint64_t key = kb::perturb_call_key(0x5EC12E7ull, 17);
      const uint32_t stream = 2;
      auto host = base;
      kb::perturb_tensor(host.data(), c.rows, c.len, eb, key, stream, false);
      void* d = dev.alloc(bytes);
      dev.upload(d, base.data(), bytes);
      dev.perturb(d, c.rows, c.len, eb, key, stream, false);
      dev.synchronize();
      std::vector<unsigned char> got(bytes);
      dev.download(got.data(), d, bytes);
      EXPECT_EQ(got, host) << c.rows << " rows of " << c.len << " elements of " << eb << " bytes";
      EXPECT_NE(got, base);
      dev.perturb(d, c.rows, c.len, eb, key, stream, true);
      dev.synchronize();
      dev.download(got.data(), d, bytes);
      EXPECT_EQ(got, base) << "undo: " << c.rows << " rows of " << c.len << " elements of " << eb << " bytes";
      dev.release(d);
    }
}

}  // namespace

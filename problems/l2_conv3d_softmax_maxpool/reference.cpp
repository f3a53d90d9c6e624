// fp64 oracle for l2_conv3d_softmax_maxpool (KernelBench v3's 6_Conv3d_Softmax_MaxPool_MaxPool), composed
// from the operator library as the module's forward reads: conv3d (deck/ops/conv.h, plain fp64 sums of
// 81 terms), softmax over the channels (deck/ops/softmax.h), max_pool3d(2) twice (deck/ops/pooling.h).
//
// An output row (OracleCase::rows: b, c, i, j over the last dim k) depends on the volume only through
// the slab of x under its 4 x 4 x 4 pooling blocks: depths 4i to 4i + 5, rows 4j to 4j + 5, every column.
// The oracle runs the whole chain on that slab, once per (b, i, j) asked for, and keeps channel c's
// row: the same ops on the same values, a few seconds for v3's shape in full (on two cores) and a few
// milliseconds for the sampled rows beside the GPU reference (reference.cu).
#include <map>
#include <tuple>
#include <vector>

#include "deck/ops/conv.h"
#include "deck/ops/pooling.h"
#include "deck/ops/rows.h"
#include "deck/ops/softmax.h"
#include "deck/registry.h"

namespace {

constexpr int64_t kInChannels = 3, kOutChannels = 16, kKernel = 3, kPool = 4;  // v3's module; two pools of 2

void l2_conv3d_softmax_maxpool_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const kb::HostTensor& x = c.inputs.at(0);
  const Tensor64 w = to_tensor64(c.weights.at(0)), b = to_tensor64(c.weights.at(1));
  const int64_t depth = x.shape.at(2), height = x.shape.at(3), width = x.shape.at(4);
  const int64_t od = (depth - kKernel + 1) / kPool, oh = (height - kKernel + 1) / kPool, ow = (width - kKernel + 1) / kPool;
  const int64_t rows_total = static_cast<int64_t>(c.expected.at(0).size()) / ow;
  const std::vector<int64_t> rows = c.rows.empty() ? all_rows(rows_total) : c.rows;

  // The rows asked for, by slab (b, i, j): the channels wanted there.
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<int64_t>> slabs;
  for (int64_t r : rows) {
    const int64_t j = r % oh, i = (r / oh) % od, ch = (r / (oh * od)) % kOutChannels, n = r / (oh * od * kOutChannels);
    slabs[{n, i, j}].push_back(ch);
  }
  constexpr int64_t kSlab = kPool + kKernel - 1;  // 6 planes and 6 rows of x per pooling block
  for (const auto& [key, channels] : slabs) {
    const auto [n, i, j] = key;
    Tensor64 slab({1, kInChannels, kSlab, kSlab, width});
    for (int64_t ci = 0; ci < kInChannels; ++ci)
      for (int64_t d = 0; d < kSlab; ++d)
        for (int64_t h = 0; h < kSlab; ++h)
          for (int64_t k = 0; k < width; ++k)
            slab[((ci * kSlab + d) * kSlab + h) * width + k] =
                x.get((((n * kInChannels + ci) * depth + kPool * i + d) * height + kPool * j + h) * width + k);
    const Tensor64 pooled = max_pool3d(max_pool3d(softmax(conv3d(slab, w, &b), 1), {.kernel = {2}}), {.kernel = {2}});
    // pooled: (1, 16, 1, 1, ow)
    for (int64_t ch : channels) {
      const int64_t row = ((n * kOutChannels + ch) * od + i) * oh + j;
      for (int64_t k = 0; k < ow; ++k) c.expected.at(0)[static_cast<size_t>(row * ow + k)] = pooled[ch * ow + k];
    }
  }
}

KB_REGISTER_ORACLE("l2_conv3d_softmax_maxpool", l2_conv3d_softmax_maxpool_oracle);

}  // namespace

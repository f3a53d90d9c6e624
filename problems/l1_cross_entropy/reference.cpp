// fp64 oracle for l1_cross_entropy (KernelBench v3's 95_CrossEntropyLoss): F.cross_entropy(logits,
// targets) with reduction "mean", composed from the operator library (deck/ops/loss.h: the row's max
// subtracted, compensated sums in double; exact to a few fp64 ulps, far below the fp32 tolerance).
#include <span>

#include "deck/ops/loss.h"
#include "deck/registry.h"

namespace {

void l1_cross_entropy_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const Tensor64 logits = to_tensor64(c.inputs.at(0));
  const kb::HostTensor& t = c.inputs.at(1);  // int64, as the solution sees it
  const std::span<const int64_t> targets(static_cast<const int64_t*>(t.data()), static_cast<size_t>(t.numel()));
  c.expected.at(0).at(0) = cross_entropy(logits, targets);
}

KB_REGISTER_ORACLE("l1_cross_entropy", l1_cross_entropy_oracle);

}  // namespace

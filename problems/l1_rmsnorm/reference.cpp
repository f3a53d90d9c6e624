// fp64 oracle for l1_rmsnorm (KernelBench v3's 36_RMSNorm_): x / sqrt(mean(x^2, dim=1) + 1e-5), no
// weight, composed from the operator library (deck/ops/norms.h, rms_norm_axis: compensated mean of
// squares in double, so the output is exact to a few fp64 ulps).
#include "deck/ops/norms.h"
#include "deck/registry.h"

namespace {

// nn's RMSNorm module of the v3 problem: eps = 1e-5 (its get_init_inputs).
constexpr double kEps = 1e-5;

void l1_rmsnorm_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  c.expected.at(0) = rms_norm_axis(to_tensor64(c.inputs.at(0)), 1, kEps).data;
}

KB_REGISTER_ORACLE("l1_rmsnorm", l1_rmsnorm_oracle);

}  // namespace

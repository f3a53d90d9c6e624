#include "protocol/perturbation.h"

#include "core/perturb.h"

namespace kb {

PerturbRows perturb_rows(const std::vector<int64_t>& shape) {
  if (shape.empty()) return {1, 1};
  const int64_t len = shape.back();
  return {len > 0 ? numel_of(shape) / len : 0, len};
}

void perturb_host_inputs(const Problem& p, std::vector<HostTensor>& inputs, uint64_t secret, uint64_t call,
                         bool undo) {
  const uint64_t key = perturb_call_key(secret, call);
  for (size_t i = 0; i < p.inputs.size() && i < inputs.size(); ++i) {
    if (!p.inputs[i].perturb) continue;
    HostTensor& t = inputs[i];
    const PerturbRows r = perturb_rows(t.shape);
    perturb_tensor(t.data(), r.rows, r.len, static_cast<int>(element_bytes(t.dtype)), key, static_cast<uint32_t>(i),
                   undo);
  }
}

}  // namespace kb

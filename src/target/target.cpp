#include "target/target.h"

#include <stdexcept>

namespace kb {

std::unique_ptr<Target> make_host_target();
#if KBENCH_WITH_CUDA
std::unique_ptr<Target> make_cuda_target();
bool cuda_device_present();
#endif

bool cuda_available() {
#if KBENCH_WITH_CUDA
  return cuda_device_present();
#else
  return false;
#endif
}

BuildOptions solution_build_options(const Problem& p, bool sandbox, std::vector<std::string> libraries) {
  BuildOptions bo{std::move(libraries), p.allowed_libraries};
  bo.sandbox = sandbox;
  return bo;
}

std::unique_ptr<Target> make_target(const std::string& name) {
  if (name == "host") return make_host_target();
  if (name == "cuda" || name == "auto") {
#if KBENCH_WITH_CUDA
    if (cuda_device_present()) return make_cuda_target();
    if (name == "cuda") throw std::invalid_argument("target 'cuda': no CUDA GPU is visible on this machine");
#else
    if (name == "cuda")
      throw std::invalid_argument("target 'cuda': this kbench was built without the CUDA toolkit; reconfigure with -DKBENCH_CUDA=ON");
#endif
    return make_host_target();
  }
  throw std::invalid_argument("unknown target '" + name + "' (expected host, cuda or auto)");
}

}  // namespace kb

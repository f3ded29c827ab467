// The names of the host phases of the step timeline.
#include "core/trainer.hpp"

namespace core {

const char* to_string(HostPhase phase) {
  switch (phase) {
    case HostPhase::Record: return "record";
    case HostPhase::Submit: return "submit";
    case HostPhase::FenceWait: return "fence wait";
    case HostPhase::ReadBack: return "read-back";
    case HostPhase::LoaderWait: return "loader wait";
    case HostPhase::Upload: return "upload";
  }
  return "?";
}

}  // namespace core

// Placeholder until the embedded log lands.
#include "events/embedded/embedded_log.h"
namespace cairn {
Result<std::unique_ptr<EventLog>> OpenEmbeddedLog(const std::string&, bool) {
  return Status::NotSupported("embedded log is not built yet");
}
}  // namespace cairn

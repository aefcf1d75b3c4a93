// Rendered JSON text of entities, kept so that a big list is assembled from pieces instead of
// rendered whole each time. A key names everything its rendering reads: an entity's id, the
// offset of the last event that changed its view, and anything else the renderer takes (the
// owner's user id), so an entry never goes stale; old versions simply stop being asked for.
// Bounded: emptied when it passes its byte cap. Thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

namespace cairn::api {

class RenderCache {
 public:
  explicit RenderCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  // The text for `key`, from `render` when it is not kept (rendered outside the lock).
  std::string Get(const std::string& key, const std::function<std::string()>& render);

 private:
  const size_t max_bytes_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::string> texts_;
  size_t bytes_ = 0;
};

}  // namespace cairn::api

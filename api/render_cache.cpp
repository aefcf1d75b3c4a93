#include "api/render_cache.h"

namespace cairn::api {

std::string RenderCache::Get(const std::string& key, const std::function<std::string()>& render) {
  {
    std::lock_guard lock(mutex_);
    auto found = texts_.find(key);
    if (found != texts_.end()) return found->second;
  }
  std::string text = render();
  const size_t bytes = key.size() + text.size();
  if (bytes > max_bytes_) return text;  // never kept: it alone would pass the cap
  std::lock_guard lock(mutex_);
  if (bytes_ + bytes > max_bytes_) {
    // Whole versions of every entity turn over together as they change: dropping all is as good
    // as any order, and costs nothing to keep.
    texts_.clear();
    bytes_ = 0;
  }
  if (texts_.emplace(key, text).second) bytes_ += bytes;
  return text;
}

}  // namespace cairn::api

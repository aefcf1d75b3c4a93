#include "base/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>

namespace cairn {

Result<std::string> GzipFast(std::string_view bytes) {
  z_stream stream{};
  // windowBits 15 + 16: a gzip wrapper around the deflate stream.
  if (deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Internal("zlib: deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, bytes.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (result != Z_STREAM_END) return Status::Internal("zlib: deflate did not finish");
  return out;
}

Result<std::string> Gunzip(std::string_view gzipped, size_t max_bytes) {
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 16) != Z_OK) return Status::Internal("zlib: inflateInit2 failed");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gzipped.data()));
  stream.avail_in = static_cast<uInt>(gzipped.size());
  std::string out;
  int result = Z_OK;
  while (result == Z_OK) {
    if (out.size() >= max_bytes) break;
    const size_t at = out.size();
    out.resize(std::min(max_bytes, std::max<size_t>(at * 2, 64 * 1024)));
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + at);
    stream.avail_out = static_cast<uInt>(out.size() - at);
    result = inflate(&stream, Z_NO_FLUSH);
    out.resize(out.size() - stream.avail_out);
  }
  inflateEnd(&stream);
  if (result != Z_STREAM_END) {
    return Status::InvalidArgument("not a whole gzip member of at most " +
                                   std::to_string(max_bytes) + " bytes");
  }
  return out;
}

bool AcceptsGzip(std::string_view accept_encoding) {
  size_t start = 0;
  while (start <= accept_encoding.size()) {
    size_t end = accept_encoding.find(',', start);
    if (end == std::string_view::npos) end = accept_encoding.size();
    std::string_view coding = accept_encoding.substr(start, end - start);
    const size_t semicolon = coding.find(';');
    std::string_view name = coding.substr(0, semicolon);
    auto trim = [](std::string_view text) {
      while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
        text.remove_prefix(1);
      }
      while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
        text.remove_suffix(1);
      }
      return text;
    };
    name = trim(name);
    std::string lower(name);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower == "gzip" || lower == "x-gzip") {
      if (semicolon == std::string_view::npos) return true;
      std::string_view parameters = trim(coding.substr(semicolon + 1));
      // "q=0", "q=0.0", "q=0.000": refused; any other weight takes it.
      if (parameters.starts_with("q=") || parameters.starts_with("Q=")) {
        std::string_view weight = parameters.substr(2);
        return weight.find_first_not_of("0.") != std::string_view::npos;
      }
      return true;
    }
    start = end + 1;
  }
  return false;
}

}  // namespace cairn

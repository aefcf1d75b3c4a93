// One-shot gzip (RFC 1952) of a buffer in memory, at deflate's fastest level: for answers sent
// many times (a big list's shared render), where a few milliseconds once save megabytes a send.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace cairn {

// `bytes` as a gzip member; Internal when zlib fails.
Result<std::string> GzipFast(std::string_view bytes);

// The bytes of a gzip member (one GzipFast made); InvalidArgument when `gzipped` is not one, or
// inflates to more than `max_bytes`.
Result<std::string> Gunzip(std::string_view gzipped, size_t max_bytes = size_t{1} << 30);

// Whether an Accept-Encoding header's value takes gzip (a "gzip" coding whose q is not 0).
bool AcceptsGzip(std::string_view accept_encoding);

}  // namespace cairn

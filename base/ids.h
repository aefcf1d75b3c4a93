// Identifiers: random UUIDs for tasks, events and requests, and the canonical UUID check.
#pragma once

#include <string>

namespace cairn {

// A random 128-bit id as 36-char lowercase UUID text (version 4), from OpenSSL's CSPRNG.
std::string NewUuid();

// A UUID in its canonical text form: 8-4-4-4-12 hex digits (either case), nothing else. Checkpoint
// ids must be one: they become directory names that garbage collection deletes.
bool IsCanonicalUuid(const std::string& text);

}  // namespace cairn

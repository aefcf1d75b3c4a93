// What every fuzz target includes: its entry point's declaration, FUZZ_CHECK for the properties
// it checks beyond "does not crash", and the input filters targets share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "base/encoding.h"

// libFuzzer's entry point, which each target defines: one input, any bytes, return 0.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

// A broken property is reported as a crash (abort), so that libFuzzer saves the input that broke
// it and the corpus replay fails on it, as for a sanitizer's report. A macro, for the line.
#define FUZZ_CHECK(condition)                                                                 \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (false)

// Whether `text` is well-formed UTF-8, as every string of a JSON request body is once parsed:
// targets that model a document sent in a body (an experiment configuration, a template) skip
// other inputs, which cannot reach it.
inline bool IsValidUtf8(std::string_view text) { return cairn::ValidUtf8Prefix(text) == text; }

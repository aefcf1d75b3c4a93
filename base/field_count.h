// FieldCount<T>(): how many non-static data members an aggregate has, counted by the compiler on
// any platform (sizeof changes with the ABI and the standard library). A record that must stay in
// step with code elsewhere (a codec, a test filling every field) says so with
//   static_assert(FieldCount<Record>() == 7, "Record changed: update ...");
// which then fails to compile when a field is added or removed, until that code and the count
// are updated together.
//
// How: an aggregate is brace-initialised from n elements exactly when n is at most its number of
// elements and the elements after the n-th can be initialised from nothing. Each element is given
// an AnyField, which converts to any type (its conversion is only declared: nothing is run), so
// the count is the largest n for which T{AnyField, ... (n times)} compiles.
//
// Contract and limits:
// - T must be an aggregate (no user-declared constructor, no private or protected data members,
//   no virtual functions): the call does not compile otherwise. Member functions, static members
//   and nested types do not count and do not matter.
// - It counts aggregate elements, which are the data members but for these: a C array member
//   counts once per element (brace elision), a base class counts as one element, and a
//   reference member or a member that no conversion can initialise makes the call fail to
//   compile. std::array and every class member (strings, containers, smart pointers, optional,
//   protobuf messages, nested aggregates) count once.
// - Bit-fields and anonymous unions are not supported.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

namespace cairn {
namespace field_count_internal {

// Converts to anything; only in unevaluated contexts.
struct AnyField {
  template <typename U>
  operator U() const;
};

// AnyField, once per index of a pack.
template <std::size_t>
using AnyFieldAt = AnyField;

template <typename T, std::size_t... kIndexes>
consteval bool BraceInitializable(std::index_sequence<kIndexes...>) {
  return requires { T{AnyFieldAt<kIndexes>{}...}; };
}

template <typename T, std::size_t kCount>
consteval bool InitializableFrom() {
  return BraceInitializable<T>(std::make_index_sequence<kCount>{});
}

// The largest n >= kFrom for which T is initialisable from n elements. Those n form one run
// (every n from just after the last element that cannot be initialised from nothing up to the
// number of elements): the counting skips the start, then walks the run to its end.
template <typename T, std::size_t kFrom>
consteval std::size_t CountFrom() {
  if constexpr (InitializableFrom<T, kFrom>()) {
    if constexpr (InitializableFrom<T, kFrom + 1>()) {
      return CountFrom<T, kFrom + 1>();
    } else {
      return kFrom;
    }
  } else if constexpr (kFrom < sizeof(T)) {  // each element takes a byte: the run starts by then
    return CountFrom<T, kFrom + 1>();
  } else {
    static_assert(kFrom < sizeof(T),
                  "FieldCount: no number of elements initialises this type (a reference member, "
                  "or a member no conversion reaches)");
    return 0;
  }
}

}  // namespace field_count_internal

// The number of elements of the aggregate T: its non-static data members, with the exceptions
// above.
template <typename T>
requires std::is_aggregate_v<T>
consteval std::size_t FieldCount() {
  return field_count_internal::CountFrom<std::remove_cv_t<T>, 0>();
}

}  // namespace cairn

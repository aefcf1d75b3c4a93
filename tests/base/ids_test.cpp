#include "base/ids.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace cairn {
namespace {

// Ids drawn across many of the per-thread random blocks: each one a version-4 UUID in canonical
// text, none repeated.
TEST(IdsTest, NewUuidsAreCanonicalVersionFourAndDistinct) {
  constexpr int kIds = 5000;  // about twenty blocks of randomness
  std::set<std::string> seen;
  for (int i = 0; i < kIds; ++i) {
    const std::string id = NewUuid();
    ASSERT_TRUE(IsCanonicalUuid(id)) << id;
    EXPECT_EQ(id[14], '4') << id;
    EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos) << id;
    EXPECT_EQ(id.find_first_of("ABCDEF"), std::string::npos) << id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kIds));
}

TEST(IdsTest, CanonicalUuidTextIsChecked) {
  EXPECT_TRUE(IsCanonicalUuid("123e4567-e89b-42d3-A456-426614174000"));
  EXPECT_FALSE(IsCanonicalUuid("123e4567e89b42d3a456426614174000"));
  EXPECT_FALSE(IsCanonicalUuid("123e4567-e89b-42d3-a456-42661417400g"));
  EXPECT_FALSE(IsCanonicalUuid("../../etc/passwd-0000-0000-0000-0000"));
}

}  // namespace
}  // namespace cairn

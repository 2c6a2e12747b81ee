// InputError's message is one line whatever the input holds.
#include "lockstep/core/error.hpp"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

TEST(InputError, ComposesLocationFieldAndMessage) {
  EXPECT_STREQ(InputError("cluster.k", "must be even", SourceLocation{"a.yaml", 4, 6}).what(),
               "a.yaml:4:6: cluster.k: must be even");
  EXPECT_STREQ(InputError("", "bad", SourceLocation{"a.yaml", 0, 0}).what(), "a.yaml: bad");
}

TEST(InputError, ControlCharactersAreEscapedSoTheMessageStaysOneLine) {
  // A key "a<LF>b<ESC>[31m" (a newline and a terminal colour escape) and a tab, a CR, DEL.
  const InputError e("x.a\nb\x1b[31m", "unknown key 'a\nb\x1b[31m'\t\r\x7f",
                     SourceLocation{"s.yaml", 2, 3});
  EXPECT_STREQ(e.what(), "s.yaml:2:3: x.a\\nb\\x1b[31m: unknown key 'a\\nb\\x1b[31m'\\t\\r\\x7f");
  // Text beyond ASCII (UTF-8) is kept as written.
  EXPECT_STREQ(InputError("name", "caf\xc3\xa9").what(), "name: caf\xc3\xa9");
}

}  // namespace
}  // namespace lockstep

// Tests of orchestrator/core/terminal_text: nothing that reaches a terminal
// through it can move the cursor, clear the screen or start a line.
#include "orchestrator/core/terminal_text.h"

#include <gtest/gtest.h>

namespace dmlbench {
namespace {

TEST(TerminalTextTest, PrintableTextIsKept) {
  EXPECT_EQ(TerminalText("ring, 4 workers: 1.08 s/epoch"), "ring, 4 workers: 1.08 s/epoch");
  EXPECT_EQ(TerminalText("µs — ä"), "µs — ä");
  EXPECT_EQ(TerminalText(""), "");
}

TEST(TerminalTextTest, EscapeSequencesAndLineBreaksBecomeVisible) {
  EXPECT_EQ(TerminalText("\x1b[2K\rcomplete\nforged"), "\\e[2K\\rcomplete\\nforged");
  EXPECT_EQ(TerminalText(std::string("a\0b\x7f\x07", 5)), "a\\x00b\\x7f\\x07");
  EXPECT_EQ(TerminalText("tab\there"), "tab\\there");
}

TEST(TerminalTextTest, C1ControlsInUtf8BecomeVisible) {
  EXPECT_EQ(TerminalText("a\xc2\x9b" "31mred"), "a\\u009b31mred");
  EXPECT_EQ(TerminalText("\xc2\xa0"), "\xc2\xa0");  // U+00A0 is not a control
}

TEST(TerminalTextTest, LineBreaksAndTabsCanBeKeptForLaidOutText) {
  EXPECT_EQ(TerminalText("one\n\ttwo\x1b]0;title\x07", /*keep_layout=*/true), "one\n\ttwo\\e]0;title\\x07");
}

TEST(TerminalTextTest, NoOutputByteIsAControlCharacter) {
  std::string every;
  for (int c = 0; c < 256; ++c) every += static_cast<char>(c);
  for (const char c : TerminalText(every)) {
    const auto byte = static_cast<unsigned char>(c);
    EXPECT_TRUE(byte >= 0x20 && byte != 0x7f) << static_cast<int>(byte);
  }
}

TEST(TerminalTextTest, VisibleControlsKeepsLineBreaksAndTabsOnly) {
  EXPECT_EQ(VisibleControls("a\r\nb\tc\x1b[1m\x07\x7f"), "a\r\nb\tc\\e[1m\\x07\\x7f");
  EXPECT_EQ(VisibleControls("\r"), "\r");
  EXPECT_EQ(VisibleControls(""), "");
}

}  // namespace
}  // namespace dmlbench

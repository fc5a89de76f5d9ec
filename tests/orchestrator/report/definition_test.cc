// Tests of orchestrator/report/definition: the committed reports/report.toml
// reads, and each mistake in a definition is reported where it is.
#include "orchestrator/report/definition.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

using testing::TempDir;
using testing::WriteFile;

TEST(ReportDefinitionTest, TheCommittedDefinitionReads) {
  const ReportDefinition definition = ReadReportDefinition(std::string(DMLBENCH_SOURCE_DIR) + "/reports/report.toml");
  ASSERT_EQ(definition.sections.size(), 20u);
  EXPECT_EQ(definition.sections[0].id, "factors");
  EXPECT_EQ(definition.sections[7].id, "intervals");
  EXPECT_EQ(definition.sections[8].id, "interval_points");
  EXPECT_EQ(definition.sections[9].id, "cpu");
  EXPECT_EQ(definition.sections[12].id, "throughput_ranking");
  EXPECT_EQ(definition.sections[12].kind, Section::Kind::kFigure);
  EXPECT_EQ(definition.sections[12].data.size(), 2u);
  EXPECT_EQ(definition.sections[13].id, "throughput");
  EXPECT_EQ(definition.sections[13].data.size(), 3u);
  EXPECT_NE(definition.views.text.find("CREATE TEMP VIEW report_runs"), std::string::npos);
}

// The default definition: the installed one (<prefix>/share/dmlbench/
// reports beside <prefix>/bin/dmlbench, as `cmake --install` lays it out)
// before the source tree's, which an uninstalled build uses.
TEST(FindReportDefinitionTest, TheInstalledOneBeforeTheSourceTrees) {
  TempDir dir;
  std::filesystem::create_directories(dir / "source/reports");
  std::filesystem::create_directories(dir / "prefix/share/dmlbench/reports");
  WriteFile(dir / "source/reports/report.toml", "title = \"source\"\n");
  const std::string source = dir / "source/reports";
  EXPECT_EQ(FindReportDefinition(dir / "prefix/bin/dmlbench", source), source + "/report.toml");
  EXPECT_EQ(FindReportDefinition("", source), source + "/report.toml");
  WriteFile(dir / "prefix/share/dmlbench/reports/report.toml", "title = \"installed\"\n");
  EXPECT_EQ(FindReportDefinition(dir / "prefix/bin/dmlbench", source),
            dir / "prefix/share/dmlbench/reports/report.toml");
}

TEST(FindReportDefinitionTest, NeitherPlaceIsAnError) {
  TempDir dir;
  try {
    FindReportDefinition(dir / "prefix/bin/dmlbench", dir / "gone/reports");
    FAIL() << "no error";
  } catch (const ReportError& e) {
    EXPECT_EQ(std::string(e.what()), "no report definition: neither " + (dir / "prefix/share/dmlbench/reports/report.toml") +
                                         " (beside the program) nor " + (dir / "gone/reports/report.toml") +
                                         " (the source tree it was built from) exists; give one with --definition FILE");
  }
}

// Error paths of definition.cc follow: each message is the whole line.
class ReportDefinitionErrorTest : public ::testing::Test {
 protected:
  std::string ErrorOf(const std::string& toml) {
    WriteFile(dir_ / "report.toml", toml);
    WriteFile(dir_ / "a.sql", "SELECT 1");
    WriteFile(dir_ / "f.gp", "");
    try {
      ReadReportDefinition(dir_ / "report.toml");
    } catch (const ReportError& e) {
      return e.what();
    }
    return "no error";
  }
  std::string At(const std::string& rest) { return (dir_ / "report.toml") + ":" + rest; }

  TempDir dir_;
};

TEST_F(ReportDefinitionErrorTest, UnknownKey) {
  EXPECT_EQ(ErrorOf("title = \"t\"\ntitel = 1\n"), At("2:1: unknown key 'titel' in the top level, did you mean 'title'?"));
}

TEST_F(ReportDefinitionErrorTest, MissingSqlFile) {
  EXPECT_EQ(ErrorOf("title = \"t\"\n[[section]]\nid = \"a\"\ntitle = \"A\"\nempty = \"e\"\ntable = \"b.sql\"\n"),
            At("6:9: table: cannot read " + (dir_ / "b.sql")));
}

TEST_F(ReportDefinitionErrorTest, BadAndDuplicateIds) {
  const std::string section = "title = \"A\"\nempty = \"e\"\ntable = \"a.sql\"\n";
  EXPECT_EQ(ErrorOf("title = \"t\"\n[[section]]\nid = \"A b\"\n" + section),
            At("3:6: section id must be made of a-z, 0-9, _ and -, got \"A b\""));
  EXPECT_EQ(ErrorOf("title = \"t\"\n[[section]]\nid = \"a\"\n" + section + "[[section]]\nid = \"a\"\n" + section),
            At("8:6: section id \"a\" is used twice"));
}

TEST_F(ReportDefinitionErrorTest, TableAndFigureTogether) {
  EXPECT_EQ(ErrorOf("title = \"t\"\n[[section]]\nid = \"a\"\ntitle = \"A\"\nempty = \"e\"\ntable = \"a.sql\"\n"
                    "figure = \"f.gp\"\n"),
            At("2:1: section a needs either table (an SQL file) or figure (a gnuplot template)"));
}

TEST_F(ReportDefinitionErrorTest, FigureWithoutData) {
  EXPECT_EQ(ErrorOf("title = \"t\"\n[[section]]\nid = \"a\"\ntitle = \"A\"\nempty = \"e\"\nfigure = \"f.gp\"\n"),
            At("2:1: figure a needs data = [{ name = \"...\", sql = \"...\" }, ...]"));
}

TEST_F(ReportDefinitionErrorTest, NoSections) {
  EXPECT_EQ(ErrorOf("title = \"t\"\n"), At("1:1: no [[section]] entries"));
}

}  // namespace
}  // namespace dmlbench

// The report's HTML page in a real browser (headless Chromium, Debian's
// `chromium`, which scripts/setup installs with the test packages): it
// renders, every image loads, nothing is logged to the console, and a
// screenshot of the right size is written to
// report-browser-test/screenshot.png in the test's working directory.
// Broken images are found by a page of the test's own that holds the report
// in an iframe and lists the images that did not load, read back with
// --dump-dom; console messages are Chromium's CONSOLE log lines on stderr.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "orchestrator/core/subprocess.h"
#include "orchestrator/report/report.h"
#include "tests/orchestrator/support/report_fixture.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;
using testing::BuildReportStudy;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

constexpr int kWidth = 1280, kHeight = 2400;

constexpr char kInspector[] = R"(<!DOCTYPE html>
<html><body><iframe id="report" src="REPORT" style="width:1200px;height:900px"></iframe>
<script>
window.addEventListener('load', function () {
  var doc = document.getElementById('report').contentDocument;
  var out = document.createElement('pre');
  out.id = 'result';
  if (!doc) {
    out.textContent = 'result: no access to the report';
  } else {
    var images = Array.prototype.slice.call(doc.images);
    var broken = images.filter(function (i) { return !i.complete || i.naturalWidth === 0; })
                       .map(function (i) { return i.getAttribute('src'); });
    out.textContent = 'result: images=' + images.length + ' broken=[' + broken.join(' ') + '] tables=' +
                      doc.querySelectorAll('table').length + ' title=' + doc.title;
  }
  document.body.appendChild(out);
});
</script></body></html>
)";

std::vector<std::string> Chromium(const std::string& profile) {
  return {"chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
          "--user-data-dir=" + profile};
}

std::string Between(const std::string& text, const std::string& begin, const std::string& end) {
  const std::size_t from = text.find(begin);
  if (from == std::string::npos) return "";
  return text.substr(from + begin.size(), text.find(end, from + begin.size()) - from - begin.size());
}

// Width and height from a PNG's IHDR chunk.
std::pair<std::uint32_t, std::uint32_t> PngSize(const std::string& png) {
  auto be32 = [&](std::size_t at) {
    return (std::uint32_t(std::uint8_t(png[at])) << 24) | (std::uint32_t(std::uint8_t(png[at + 1])) << 16) |
           (std::uint32_t(std::uint8_t(png[at + 2])) << 8) | std::uint32_t(std::uint8_t(png[at + 3]));
  };
  if (png.size() < 24 || png.compare(1, 3, "PNG") != 0) return {0, 0};
  return {be32(16), be32(20)};
}

TEST(ReportBrowserTest, ThePageRendersWithEveryImageAndNoConsoleMessage) {
  ASSERT_FALSE(ResolveProgram("chromium").empty())
      << "chromium is not installed: scripts/setup installs it (Debian package chromium) with the test packages";
  TempDir dir;
  BuildReportStudy(dir / "study.db");
  ReportOptions options;
  options.database = dir / "study.db";
  options.out_dir = dir / "report";
  options.definition = std::string(DMLBENCH_SOURCE_DIR) + "/reports/report.toml";
  GenerateReport(options);

  std::string inspector = kInspector;
  inspector.replace(inspector.find("REPORT"), 6, "file://" + (dir / "report/index.html"));
  WriteFile(dir / "inspect.html", inspector);
  std::vector<std::string> argv = Chromium(dir / "profile");
  argv.insert(argv.end(), {"--allow-file-access-from-files", "--enable-logging=stderr", "--v=0",
                           "--virtual-time-budget=10000", "--dump-dom", "file://" + (dir / "inspect.html")});
  const CommandOutput inspected = RunCommand(argv, 180);
  ASSERT_EQ(inspected.exit_code, 0) << inspected.err;
  const std::string result = Between(inspected.out, "<pre id=\"result\">result: ", "</pre>");
  EXPECT_EQ(result, "images=5 broken=[] tables=14 title=dmlbench report: distributed training, measured and modelled")
      << inspected.out;
  EXPECT_EQ(inspected.err.find(":CONSOLE"), std::string::npos) << inspected.err;

  const fs::path shots = fs::absolute("report-browser-test");
  fs::create_directories(shots);
  const std::string screenshot = (shots / "screenshot.png").string();
  fs::remove(screenshot);
  argv = Chromium(dir / "profile");
  argv.insert(argv.end(), {"--hide-scrollbars", "--window-size=" + std::to_string(kWidth) + "," + std::to_string(kHeight),
                           "--screenshot=" + screenshot, "file://" + (dir / "report/index.html")});
  const CommandOutput shot = RunCommand(argv, 180);
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  const std::string png = ReadFile(screenshot);
  EXPECT_EQ(PngSize(png), std::make_pair(std::uint32_t(kWidth), std::uint32_t(kHeight)));
  // A blank page compresses to a few kilobytes; tables and figures do not.
  EXPECT_GT(png.size(), 100000u) << screenshot;
  std::cout << "screenshot: " << screenshot << " (" << png.size() << " bytes)\n";
}

}  // namespace
}  // namespace dmlbench

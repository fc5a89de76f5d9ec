// The report's HTML page in a real browser (headless Chromium, Debian's
// `chromium`, which scripts/setup installs with the test packages), at
// 1280 px wide, on the committed study's database: it renders, every image loads, nothing is logged to the console,
// the page has no horizontal overflow, every figure is shown at (nearly)
// its own size — a figure shrunk to fit would have unreadable text — and no
// wider than the window, long tables are folded, every table (unfolded)
// fits the page's width with each row's label on one line, and the tables'
// headers are written for people, not SQL names. Measured by a page of the test's
// own that holds the report in an iframe 1280 px wide and writes what it
// finds into its DOM, read back with --dump-dom; console messages are
// Chromium's CONSOLE log lines on stderr. Screenshots are written to
// report-browser-test/ in the test's working directory: page.png (the top
// of the page) and <figure id>.png, each figure's section as the page
// shows it at 1280 px.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "orchestrator/core/subprocess.h"
#include "orchestrator/report/report.h"
#include "tests/orchestrator/support/run_fixture.h"

namespace dmlbench {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

// The committed study (reports/README.md): the page a reader of the
// project sees, two networks, six schemes and every model.
const std::string kStudy = std::string(DMLBENCH_SOURCE_DIR) + "/reports/data/paper-reproduction.db";
constexpr int kWidth = 1280, kHeight = 2400;
// A figure drawn smaller than this share of its own size has text below
// about 8 px: unreadable.
constexpr double kLeastScale = 0.85;

constexpr char kInspector[] = R"(<!DOCTYPE html>
<html><body style="margin:0"><iframe id="report" src="REPORT" style="width:1280px;height:900px;border:0"></iframe>
<script>
window.addEventListener('load', function () {
  var frame = document.getElementById('report');
  var doc = frame.contentDocument;
  var out = document.createElement('pre');
  out.id = 'result';
  if (!doc) {
    out.textContent = 'result: no access to the report';
  } else {
    var list = function (nodes) { return Array.prototype.slice.call(nodes); };
    var images = list(doc.images);
    var broken = images.filter(function (i) { return !i.complete || i.naturalWidth === 0; })
                       .map(function (i) { return i.getAttribute('src'); });
    var top = function (node) { return Math.round(node.getBoundingClientRect().top + frame.contentWindow.scrollY); };
    var figures = list(doc.querySelectorAll('figure img')).map(function (i) {
      var r = i.getBoundingClientRect();
      var section = i.closest('section');
      return section.id + ' ' + i.naturalWidth + ' ' + i.naturalHeight + ' ' + Math.round(r.width) + ' ' +
             Math.round(r.height) + ' ' + (top(i) - top(section));
    });
    var headers = list(doc.querySelectorAll('section th')).map(function (h) { return h.textContent; });
    var folded = doc.querySelectorAll('details').length;
    // Opened, every table must fit the page's width, and no row's label
    // (its first cell) may take more than one line.
    list(doc.querySelectorAll('details')).forEach(function (d) { d.open = true; });
    var wide = list(doc.querySelectorAll('section table')).filter(function (t) {
      return t.scrollWidth > t.parentNode.clientWidth; }).map(function (t) { return t.closest('section').id; });
    var wrapped = list(doc.querySelectorAll('section td:first-child')).filter(function (td) {
      var range = doc.createRange();
      range.selectNodeContents(td);
      var lines = {};
      list(range.getClientRects()).forEach(function (r) { lines[Math.round(r.top)] = 1; });
      return Object.keys(lines).length > 1;
    }).length;
    out.textContent = 'result: images=' + images.length + ' broken=[' + broken.join(' ') + '] tables=' +
                      doc.querySelectorAll('table').length + ' folded=' + folded + ' wide=[' + wide.join(' ') +
                      '] wrapped_labels=' + wrapped +
                      ' overflow=' + (doc.documentElement.scrollWidth - doc.documentElement.clientWidth) +
                      ' title=' + doc.title + '\nfigures:\n' + figures.join('\n') + '\nheaders:\n' +
                      headers.join('\n') + '\nend';
  }
  document.body.appendChild(out);
});
</script></body></html>
)";

// One section of the report as the page shows it at 1280 px: scrolled to
// the section's anchor.
constexpr char kSection[] = R"(<!DOCTYPE html>
<html><body style="margin:0;overflow:hidden"><iframe src="REPORT" scrolling="no"
 style="width:1280px;height:HEIGHTpx;border:0"></iframe></body></html>
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

std::string Replaced(std::string text, const std::string& what, const std::string& with) {
  text.replace(text.find(what), what.size(), with);
  return text;
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

// A figure as the inspector measured it, in CSS pixels.
struct Figure {
  std::string id;
  int natural_width = 0, natural_height = 0, width = 0, height = 0;
  int offset = 0;  // from its section's top to the image's
};

// A screenshot of `page` at kWidth x height into `file`; returns its bytes.
std::string Screenshot(const std::string& profile, const std::string& page, int height, const std::string& file) {
  fs::remove(file);
  std::vector<std::string> argv = Chromium(profile);
  argv.insert(argv.end(), {"--hide-scrollbars", "--allow-file-access-from-files", "--virtual-time-budget=10000",
                           "--window-size=" + std::to_string(kWidth) + "," + std::to_string(height),
                           "--screenshot=" + file, "file://" + page});
  const CommandOutput shot = RunCommand(argv, 180);
  EXPECT_EQ(shot.exit_code, 0) << shot.err;
  return ReadFile(file);
}

TEST(ReportBrowserTest, EveryFigureIsReadableAt1280PixelsAndThePageDoesNotOverflow) {
  ASSERT_FALSE(ResolveProgram("chromium").empty())
      << "chromium is not installed: scripts/setup installs it (Debian package chromium) with the test packages";
  TempDir dir;
  ReportOptions options;
  options.database = kStudy;
  ASSERT_TRUE(fs::exists(kStudy)) << kStudy << " is missing: configuring the build expands it (reports/README.md)";
  options.out_dir = dir / "report";
  options.definition = std::string(DMLBENCH_SOURCE_DIR) + "/reports/report.toml";
  GenerateReport(options);
  const std::string report = dir / "report/index.html";

  WriteFile(dir / "inspect.html", Replaced(kInspector, "REPORT", "file://" + report));
  std::vector<std::string> argv = Chromium(dir / "profile");
  argv.insert(argv.end(), {"--allow-file-access-from-files", "--enable-logging=stderr", "--v=0",
                           "--virtual-time-budget=10000", "--dump-dom", "file://" + (dir / "inspect.html")});
  const CommandOutput inspected = RunCommand(argv, 180);
  ASSERT_EQ(inspected.exit_code, 0) << inspected.err;
  const std::string result = Between(inspected.out, "<pre id=\"result\">result: ", "</pre>");
  EXPECT_EQ(result.substr(0, result.find('\n')),
            "images=6 broken=[] tables=13 folded=8 wide=[] wrapped_labels=0 overflow=0 title=dmlbench report: "
            "distributed training, measured and modelled")
      << inspected.out;
  EXPECT_EQ(inspected.err.find(":CONSOLE"), std::string::npos) << inspected.err;

  std::vector<Figure> figures;
  std::istringstream lines(Between(result, "\nfigures:\n", "\nheaders:\n"));
  for (std::string line; std::getline(lines, line);) {
    Figure f;
    std::istringstream(line) >> f.id >> f.natural_width >> f.natural_height >> f.width >> f.height >> f.offset;
    figures.push_back(f);
  }
  std::vector<std::string> ids;
  for (const Figure& f : figures) ids.push_back(f.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"throughput_ranking", "throughput", "predicted_vs_measured", "error_cdf",
                                           "time_breakdown", "iteration_series"}));
  for (const Figure& f : figures) {
    EXPECT_GE(f.width, kLeastScale * f.natural_width) << f.id << " is shrunk from " << f.natural_width << " px to "
                                                      << f.width << ": its text is too small to read";
    EXPECT_LE(f.width, kWidth - 32) << f.id << " is wider than the page";
    EXPECT_GT(f.height, 300) << f.id;
  }

  // Headers for people: words and units, no SQL names.
  std::vector<std::string> headers;
  std::istringstream header_lines(Between(result, "\nheaders:\n", "\nend"));
  for (std::string line; std::getline(header_lines, line);) headers.push_back(line);
  for (const std::string& header : headers) EXPECT_EQ(header.find('_'), std::string::npos) << header;
  for (const char* expected : {"epoch time, s: median [95% interval]", "corrected: error %", "run-to-run CV, %",
                               "validation: median error %", "throughput, samples/s"}) {
    EXPECT_NE(std::find(headers.begin(), headers.end(), expected), headers.end()) << expected;
  }

  // The screenshots: the top of the page, and each figure's section.
  const fs::path shots = fs::absolute("report-browser-test");
  fs::create_directories(shots);
  const std::string page = Screenshot(dir / "profile", report, kHeight, (shots / "page.png").string());
  EXPECT_EQ(PngSize(page), std::make_pair(std::uint32_t(kWidth), std::uint32_t(kHeight)));
  // A blank page compresses to a few kilobytes; tables and figures do not.
  EXPECT_GT(page.size(), 100000u) << shots / "page.png";
  for (const Figure& f : figures) {
    const int height = f.offset + f.height + 40;
    const std::string wrapper = dir / (f.id + ".html");
    WriteFile(wrapper, Replaced(Replaced(kSection, "REPORT", "file://" + report + "#" + f.id), "HEIGHT",
                                std::to_string(height)));
    const std::string file = (shots / (f.id + ".png")).string();
    const std::string png = Screenshot(dir / "profile", wrapper, height, file);
    EXPECT_EQ(PngSize(png), std::make_pair(std::uint32_t(kWidth), std::uint32_t(height))) << file;
    EXPECT_GT(png.size(), 30000u) << file;
    std::cout << "screenshot: " << file << " (" << png.size() << " bytes)\n";
  }
}

}  // namespace
}  // namespace dmlbench

#include "orchestrator/report/page.h"

#include "orchestrator/report/formats.h"

namespace dmlbench {
namespace {

constexpr char kStyle[] = R"(body{font-family:sans-serif;max-width:80em;margin:1em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0;font-size:85%}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
th{background:#f0f0f0;font-weight:600;vertical-align:bottom;overflow-wrap:anywhere}.num{text-align:right;font-variant-numeric:tabular-nums}
td{white-space:nowrap}td.long{white-space:normal;min-width:20em}.wide{overflow-x:auto;max-width:100%}
details>summary{cursor:pointer;color:#1b6ca8;margin:.3em 0}
figure{margin:1em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
.missing{background:#fff6e0;border-left:4px solid #e0a000;padding:.5em}
.files,figcaption,.caption{color:#555}footer{margin-top:2em;border-top:1px solid #ccc}
)";

// A table of more rows than this is folded in the page (<details>), so that
// the sections after it stay within reach; its summary says how many.
constexpr std::size_t kFoldedRows = 20;

bool Shown(const SectionResult& result) { return result.missing.empty(); }

std::string HtmlFiles(const SectionResult& result) {
  const std::string& id = result.section->id;
  std::string links;
  auto link = [&](const std::string& path) {
    links += (links.empty() ? "" : " · ") + std::string("<a href=\"") + EscapeHtml(path) + "\">" + EscapeHtml(path) + "</a>";
  };
  if (result.section->kind == Section::Kind::kTable) {
    for (const char* format : {".csv", ".md", ".tex"}) link("tables/" + id + format);
  } else {
    for (const char* format : {".svg", ".png"}) link("figures/" + id + format);
    for (const auto& [name, rows] : result.data) link("figures/" + id + "." + name + ".tsv");
  }
  return links;
}

std::string HtmlSection(const SectionResult& result) {
  const Section& section = *result.section;
  std::string html = "<section id=\"" + EscapeHtml(section.id) + "\">\n<h2>" + EscapeHtml(section.title) + "</h2>\n";
  if (!section.caption.empty()) html += "<p class=\"caption\">" + EscapeHtml(section.caption) + "</p>\n";
  if (!Shown(result)) return html + "<p class=\"missing\">" + EscapeHtml(result.missing) + "</p>\n</section>\n";
  if (section.kind == Section::Kind::kTable) {
    const std::string table = "<div class=\"wide\">\n" + HtmlTable(result.table) + "</div>\n";
    const std::size_t rows = result.table.rows.size();
    html += rows <= kFoldedRows ? table
                                : "<details>\n<summary>" + std::to_string(rows) + " rows: show the table</summary>\n" +
                                      table + "</details>\n";
  } else {
    html += "<figure>\n<img src=\"figures/" + EscapeHtml(section.id) + ".svg\" alt=\"" + EscapeHtml(section.title) +
            "\">\n</figure>\n";
    for (const std::string& note : result.notes) html += "<p class=\"missing\">" + EscapeHtml(note) + "</p>\n";
  }
  return html + "<p class=\"files\">" + HtmlFiles(result) + "</p>\n</section>\n";
}

std::string MarkdownSection(const SectionResult& result) {
  const Section& section = *result.section;
  std::string text = "## " + EscapeMarkdown(section.title) + "\n\n";
  if (!section.caption.empty()) text += EscapeMarkdown(section.caption) + "\n\n";
  if (!Shown(result)) return text + "> " + EscapeMarkdown(result.missing) + "\n\n";
  if (section.kind == Section::Kind::kTable) return text + MarkdownTable(result.table) + "\n";
  text += "![" + EscapeMarkdown(section.title) + "](figures/" + section.id + ".svg)\n\n";
  for (const std::string& note : result.notes) text += "> " + EscapeMarkdown(note) + "\n\n";
  return text;
}

}  // namespace

std::string HtmlPage(const PageInput& input) {
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                     EscapeHtml(input.title) + "</title>\n<style>\n" + kStyle + "</style>\n</head>\n<body>\n<h1>" +
                     EscapeHtml(input.title) + "</h1>\n<p>From the results database <code>" +
                     EscapeHtml(input.database_name) + "</code> alone (provenance at the end).</p>\n<p class=\"scope\">Runs covered: " +
                     EscapeHtml(input.covers) + ".</p>\n<nav>\n<ul>\n";
  for (const SectionResult& result : input.sections) {
    html += "<li><a href=\"#" + EscapeHtml(result.section->id) + "\">" + EscapeHtml(result.section->title) + "</a>" +
            (Shown(result) ? "" : " (missing)") + "</li>\n";
  }
  html += "</ul>\n</nav>\n";
  for (const SectionResult& result : input.sections) html += HtmlSection(result);
  html += "<footer>\n<h2>Provenance</h2>\n" + HtmlTable(input.provenance) + "</footer>\n</body>\n</html>\n";
  return html;
}

std::string MarkdownPage(const PageInput& input) {
  std::string text = "# " + EscapeMarkdown(input.title) + "\n\nFrom the results database " +
                     EscapeMarkdown(input.database_name) + " alone (provenance at the end).\n\nRuns covered: " +
                     EscapeMarkdown(input.covers) + ".\n\n";
  for (const SectionResult& result : input.sections) text += MarkdownSection(result);
  return text + "## Provenance\n\n" + MarkdownTable(input.provenance);
}

}  // namespace dmlbench

#include "orchestrator/report/definition.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace dmlbench {
namespace {

const std::vector<std::string_view> kTopLevelKeys = {"title", "views", "provenance", "section"};
const std::vector<std::string_view> kSectionKeys = {"id", "title", "caption", "empty", "table", "figure", "data"};
const std::vector<std::string_view> kDataKeys = {"name", "sql", "missing"};

bool IsName(const std::string& text, bool dash_allowed) {
  if (text.empty()) return false;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || (dash_allowed && c == '-');
    if (!ok) return false;
  }
  return true;
}

class Reader : public TomlReader {
 public:
  Reader(std::string path, std::string text) : TomlReader(std::move(path), std::move(text)) {
    base_dir_ = std::filesystem::path(this->path()).parent_path();
  }

  ReportDefinition Read() const {
    const toml::table root = Parse();
    CheckKeys(root, kTopLevelKeys, "the top level");
    ReportDefinition definition;
    definition.path = path();
    definition.title = Required(root, "title", "the top level");
    if (const toml::node* node = root.get("views")) definition.views = ReadSql(*node, "views");
    if (const toml::node* node = root.get("provenance")) definition.provenance = ReadSql(*node, "provenance");
    std::set<std::string> ids;
    for (const toml::table* section : TableArray(root, "section")) {
      definition.sections.push_back(ReadSection(*section));
      if (!ids.insert(definition.sections.back().id).second) {
        Fail(*section->get("id"), "section id \"" + definition.sections.back().id + "\" is used twice");
      }
    }
    if (definition.sections.empty()) Fail(root.source(), "no [[section]] entries");
    return definition;
  }

 protected:
  [[noreturn]] void Throw(const std::string& message, const std::string& excerpt) const override {
    throw ReportError(message, excerpt);
  }

 private:
  std::string Required(const toml::table& table, std::string_view key, std::string_view where) const {
    const toml::node* node = table.get(key);
    if (node == nullptr) Fail(table.source(), std::string(where) + " needs " + std::string(key));
    return ReadName(*node, key);
  }

  // A file named relative to the definition, which must be readable.
  std::string ReadFileAt(const toml::node& node, std::string_view name, std::string* absolute) const {
    const std::filesystem::path file = base_dir_ / ReadName(node, name);
    std::ifstream in(file, std::ios::binary);
    if (!in) Fail(node, std::string(name) + ": cannot read " + file.string());
    std::ostringstream text;
    text << in.rdbuf();
    if (absolute != nullptr) *absolute = std::filesystem::absolute(file).lexically_normal().string();
    return text.str();
  }

  SqlFile ReadSql(const toml::node& node, std::string_view name) const {
    SqlFile sql;
    sql.path = ReadName(node, name);
    sql.text = ReadFileAt(node, name, nullptr);
    return sql;
  }

  Section ReadSection(const toml::table& table) const {
    CheckKeys(table, kSectionKeys, "a [[section]]");
    Section section;
    section.id = Required(table, "id", "a [[section]]");
    if (!IsName(section.id, /*dash_allowed=*/true)) {
      Fail(*table.get("id"), "section id must be made of a-z, 0-9, _ and -, got " + Quoted(section.id));
    }
    section.title = Required(table, "title", "section " + section.id);
    if (const toml::node* node = table.get("caption")) section.caption = ReadString(*node, "caption");
    section.empty = Required(table, "empty", "section " + section.id);
    const toml::node* sql = table.get("table");
    const toml::node* figure = table.get("figure");
    if ((sql == nullptr) == (figure == nullptr)) {
      Fail(table.source(), "section " + section.id + " needs either table (an SQL file) or figure (a gnuplot template)");
    }
    if (sql != nullptr) {
      if (table.get("data") != nullptr) Fail(*table.get("data"), "data belongs to figures; a table has its SQL in table");
      section.kind = Section::Kind::kTable;
      section.table = ReadSql(*sql, "table");
      return section;
    }
    section.kind = Section::Kind::kFigure;
    ReadFileAt(*figure, "figure", &section.template_path);
    const toml::node* data = table.get("data");
    if (data == nullptr || !data->is_array() || data->as_array()->empty()) {
      Fail(data != nullptr ? data->source() : table.source(),
           "figure " + section.id + " needs data = [{ name = \"...\", sql = \"...\" }, ...]");
    }
    std::set<std::string> names;
    for (const toml::node& entry : *data->as_array()) {
      if (!entry.is_table()) Fail(entry, "data entries must be tables { name = ..., sql = ... }, got " + Found(entry));
      const toml::table& fields = *entry.as_table();
      CheckKeys(fields, kDataKeys, "a data entry");
      FigureData item;
      item.name = Required(fields, "name", "a data entry");
      if (!IsName(item.name, /*dash_allowed=*/false)) {
        Fail(*fields.get("name"), "data name must be made of a-z, 0-9 and _, got " + Quoted(item.name));
      }
      if (!names.insert(item.name).second) Fail(*fields.get("name"), "data name \"" + item.name + "\" is used twice");
      const toml::node* file = fields.get("sql");
      if (file == nullptr) Fail(fields.source(), "data entry " + item.name + " needs sql");
      item.sql = ReadSql(*file, "sql");
      if (const toml::node* node = fields.get("missing")) item.missing = ReadString(*node, "missing");
      section.data.push_back(std::move(item));
    }
    return section;
  }

  std::filesystem::path base_dir_;
};

}  // namespace

ReportDefinition ReadReportDefinition(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ReportError(path + ": cannot read the report definition");
  std::ostringstream text;
  text << in.rdbuf();
  return Reader(path, text.str()).Read();
}

std::string FindReportDefinition(const std::string& executable, const std::string& source_reports_dir) {
  std::string tried;
  if (!executable.empty()) {
    const std::filesystem::path installed = std::filesystem::path(executable).parent_path().parent_path() / "share" /
                                            "dmlbench" / "reports" / "report.toml";
    if (std::filesystem::is_regular_file(installed)) return installed.string();
    tried = installed.string() + " (beside the program) nor ";
  }
  const std::filesystem::path source = std::filesystem::path(source_reports_dir) / "report.toml";
  if (std::filesystem::is_regular_file(source)) return source.string();
  throw ReportError("no report definition: neither " + tried + source.string() +
                    " (the source tree it was built from) exists; give one with --definition FILE");
}

}  // namespace dmlbench

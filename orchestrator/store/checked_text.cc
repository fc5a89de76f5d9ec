#include "orchestrator/store/checked_text.h"

#include <algorithm>

#include "orchestrator/core/run_spec.h"
#include "orchestrator/core/toml_reader.h"
#include "orchestrator/store/store.h"

namespace dmlbench {
namespace {

std::string RunColumn(const std::string& db, std::int64_t run_id, std::string_view column) {
  return db + ": run " + std::to_string(run_id) + ": runs." + std::string(column);
}

bool IsDecimal(std::string_view text) {
  return !text.empty() && text.size() <= 9 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool IsRunKey(std::string_view text) {
  return text.size() == 64 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool IsPlainName(std::string_view name) {
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  return !name.empty() && name.size() <= 128 && letter(name.front()) &&
         std::all_of(name.begin(), name.end(), [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

std::string CheckedRunKey(const std::string& db, std::int64_t run_id, std::string text) {
  if (!IsRunKey(text)) {
    throw StoreError(RunColumn(db, run_id, "run_key") + " is not 64 lowercase hex digits, got " + Quoted(text), -1);
  }
  return text;
}

std::vector<int> CheckedLayerWidths(const std::string& db, std::int64_t run_id, const std::string& text) {
  std::vector<int> widths;
  std::string_view rest = text;
  bool valid = !text.empty();
  while (valid) {
    const std::string_view part = rest.substr(0, rest.find(','));
    valid = IsDecimal(part) && std::stoi(std::string(part)) >= 1 && std::stoi(std::string(part)) <= kMaxLayerSize &&
            widths.size() < static_cast<std::size_t>(kMaxHiddenLayers);
    if (!valid) break;
    widths.push_back(std::stoi(std::string(part)));
    if (part.size() == rest.size()) break;
    rest.remove_prefix(part.size() + 1);
  }
  if (!valid) {
    throw StoreError(RunColumn(db, run_id, "hidden") + " is not a list of 1 to " + std::to_string(kMaxHiddenLayers) +
                         " layer widths (integers 1.." + std::to_string(kMaxLayerSize) +
                         " separated by commas, e.g. \"128,32\"), got " + Quoted(text),
                     -1);
  }
  return widths;
}

std::string PathInside(const std::string& db, const std::string& dir, const std::string& relative,
                       const std::string& what) {
  bool inside = !relative.empty() && relative.front() != '/';
  std::string_view rest = relative;
  while (inside) {
    const std::string_view part = rest.substr(0, rest.find('/'));
    inside = !part.empty() && part != "." && part != ".." && part.find('\0') == std::string_view::npos;
    if (part.size() == rest.size()) break;
    rest.remove_prefix(part.size() + 1);
  }
  if (!inside) throw StoreError(db + ": " + what + " is not a path inside " + dir + ", got " + Quoted(relative), -1);
  return dir + "/" + relative;
}

}  // namespace dmlbench

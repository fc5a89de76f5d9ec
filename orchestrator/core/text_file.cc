#include "orchestrator/core/text_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace dmlbench {

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<WriteFailure> WriteTextFile(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::out | std::ios::trunc);
  out << text;
  out.flush();
  if (!out) return WriteFailure{path, std::strerror(errno)};
  return std::nullopt;
}

std::optional<WriteFailure> ReplaceTextFile(const std::string& path, std::string_view text) {
  const std::string temporary = path + ".tmp";
  if (std::optional<WriteFailure> failure = WriteTextFile(temporary, text)) return failure;
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) return WriteFailure{path, error.message()};
  return std::nullopt;
}

}  // namespace dmlbench

// Shell quoting for every argument sent to a remote POSIX shell (sshd runs
// each command through the user's login shell). Owns no state; pure functions,
// safe from any thread. Does not split or parse shell text.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_SHELL_QUOTE_H_
#define DMLBENCH_ORCHESTRATOR_CORE_SHELL_QUOTE_H_

#include <string>
#include <string_view>
#include <vector>

namespace dmlbench {

// One word for a POSIX shell: the text itself when it holds only characters
// no shell treats specially ([A-Za-z0-9_@%+=:,./-], not empty), otherwise
// wrapped in single quotes with each ' written as '\''. Newlines, `$(...)`,
// backquotes and ; are kept literally inside the quotes.
std::string ShellQuote(std::string_view word);

// Each word quoted, joined by single spaces.
std::string ShellJoin(const std::vector<std::string>& words);

// A remote path for the shell: a leading "~/" becomes "$HOME"/ so the remote
// shell expands the home directory while the rest stays quoted.
std::string ShellQuotePath(std::string_view path);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_SHELL_QUOTE_H_

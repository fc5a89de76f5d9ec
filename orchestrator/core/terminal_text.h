// TerminalText: makes a string safe to print on a terminal. Strings that
// come from a run (failure reasons, trainer output), from a file name or from
// the database may hold control characters; printed raw, an ESC sequence
// redraws the screen (a failure reason once overwrote the progress line with
// a fake "complete") and a newline forges a line. Every place that prints
// such a string to a person passes it through here; the files written for
// a person to read (CSV, the report's HTML, Markdown and LaTeX) keep their
// line breaks and escape the rest (VisibleControls); JSON escapes its own,
// and the logs keep their bytes as they are. Pure; thread-safe.
#ifndef DMLBENCH_ORCHESTRATOR_CORE_TERMINAL_TEXT_H_
#define DMLBENCH_ORCHESTRATOR_CORE_TERMINAL_TEXT_H_

#include <string>
#include <string_view>

namespace dmlbench {

// Control characters — C0 (0x00-0x1f), DEL (0x7f) and the C1 range
// U+0080-U+009F in UTF-8 — as visible escapes: "\n", "\r", "\t", "\e" and
// otherwise "\xNN" (C1: "\u0080"-"\u009f"). With `keep_layout`, '\n' and
// '\t' stay as they are (text shown over several lines, a source excerpt
// whose caret line relies on tabs).
// Everything else, valid UTF-8 or not, is kept.
std::string TerminalText(std::string_view text, bool keep_layout = false);

// For the files a person opens and reads (CSV, HTML, Markdown, LaTeX, the
// figures' data), whose own line breaks are LF, CR and TAB: those three
// kept, every other control character as TerminalText escapes it, so that
// `cat` of a report or `query --csv` cannot ring or redraw a terminal.
std::string VisibleControls(std::string_view text);

}  // namespace dmlbench

#endif  // DMLBENCH_ORCHESTRATOR_CORE_TERMINAL_TEXT_H_

#include "orchestrator/filter/filter.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>

namespace dmlbench {
namespace {

using Field = Filter::Field;
using Op = Filter::Op;

// How a key's values are read and compared.
enum class Kind {
  kInteger,    // =, !=, <, <=, >, >=
  kNumber,     // the same, as a double
  kBoolean,    // true/false, on/off
  kChoice,     // one of a closed set of words
  kText,       // any text; quote it when it holds ',' or '|'
  kHexPrefix,  // a prefix of a hex sha256
};

struct Key {
  std::string_view name;
  Field field;
  Kind kind;
  std::vector<std::string_view> choices;  // kChoice only
};

const std::vector<Key>& Keys() {
  static const std::vector<Key> keys = {
      {"architecture", Field::kArchitecture, Kind::kChoice, AllTexts<Architecture>()},
      {"workers", Field::kWorkers, Kind::kInteger, {}},
      {"servers", Field::kServers, Kind::kInteger, {}},
      {"batch_size", Field::kBatchSize, Kind::kInteger, {}},
      {"epochs", Field::kEpochs, Kind::kInteger, {}},
      {"hidden", Field::kHidden, Kind::kText, {}},
      {"learning_rate", Field::kLearningRate, Kind::kNumber, {}},
      {"overlap", Field::kOverlap, Kind::kBoolean, {}},
      {"bucket_bytes", Field::kBucketBytes, Kind::kInteger, {}},
      {"partition_bytes", Field::kPartitionBytes, Kind::kInteger, {}},
      {"pulls_in_turn", Field::kPullsInTurn, Kind::kBoolean, {}},
      {"max_iterations_per_epoch", Field::kMaxIterationsPerEpoch, Kind::kInteger, {}},
      {"dataset", Field::kDataset, Kind::kChoice, {"fashion-mnist", "synthetic"}},
      {"network", Field::kNetwork, Kind::kText, {}},
      {"seed", Field::kSeed, Kind::kInteger, {}},
      {"repetition", Field::kRepetition, Kind::kInteger, {}},
      {"split", Field::kSplit, Kind::kChoice, {"calibration", "validation"}},
      {"status", Field::kStatus, Kind::kChoice, AllTexts<RunState>()},
      {"tag", Field::kTag, Kind::kText, {}},
      {"experiment", Field::kExperiment, Kind::kText, {}},
      {"key", Field::kKey, Kind::kHexPrefix, {}},
      {"trainer", Field::kTrainer, Kind::kHexPrefix, {}},
  };
  return keys;
}

const Key* FindKey(std::string_view name) {
  for (const Key& key : Keys()) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

std::string_view OpText(Op op) {
  switch (op) {
    case Op::kEqual: return "=";
    case Op::kNotEqual: return "!=";
    case Op::kLess: return "<";
    case Op::kLessEqual: return "<=";
    case Op::kGreater: return ">";
    case Op::kGreaterEqual: return ">=";
  }
  return "?";
}

bool IsHex(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

std::string QuotedChoices(const std::vector<std::string_view>& choices) {
  std::string text;
  for (std::string_view choice : choices) text += (text.empty() ? "\"" : ", \"") + std::string(choice) + "\"";
  return text;
}

std::string JoinInts(const std::vector<int>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
  return text;
}

// Reads the filter text left to right; every failure names its column.
class Parser {
 public:
  Parser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  std::vector<Filter::Term> Terms() {
    std::vector<Filter::Term> terms;
    SkipSpaces();
    if (AtEnd()) Fail(pos_, "expected a filter term, got nothing");
    while (true) {
      terms.push_back(ReadTerm());
      SkipSpaces();
      if (AtEnd()) return terms;
      if (text_[pos_] != ',') Fail(pos_, "expected ',' between terms, got '" + std::string(1, text_[pos_]) + "'");
      ++pos_;
      SkipSpaces();
      if (AtEnd()) Fail(pos_, "expected a filter term after ','");
    }
  }

 private:
  [[noreturn]] void Fail(size_t at, const std::string& message) const {
    // Columns count characters, as the caret line does.
    int column = 1;
    for (size_t i = 0; i < at && i < text_.size(); ++i) {
      column += (static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80;
    }
    throw FilterError(source_ + ": column " + std::to_string(column) + ": " + message,
                      SourceExcerpt(text_, 1, column));
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  void SkipSpaces() {
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  Filter::Term ReadTerm() {
    const size_t word_at = pos_;
    while (!AtEnd() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    const std::string_view word = text_.substr(word_at, pos_ - word_at);
    if (word.empty()) Fail(word_at, "expected a key or a run-key prefix, got '" + std::string(1, text_[pos_]) + "'");
    SkipSpaces();
    if (AtEnd() || text_[pos_] == ',') {
      // A bare word is a prefix of the run key.
      if (!IsHex(word)) {
        Fail(word_at, "expected KEY=VALUE or a run-key prefix (hexadecimal digits), got '" + std::string(word) +
                          "'");
      }
      return {Field::kKey, Op::kEqual, {Lower(word)}, {}};
    }
    const Key* key = FindKey(word);
    if (key == nullptr) {
      std::vector<std::string_view> names;
      for (const Key& k : Keys()) names.push_back(k.name);
      const std::string closest = ClosestName(word, names);
      Fail(word_at, "unknown key '" + std::string(word) + "', " +
                        (closest.empty() ? "expected one of: " + JoinNames(names)
                                         : "did you mean '" + closest + "'?"));
    }
    const size_t op_at = pos_;
    const Op op = ReadOp(*key);
    const bool ordered = op != Op::kEqual && op != Op::kNotEqual;
    if (ordered && key->kind != Kind::kInteger && key->kind != Kind::kNumber) {
      Fail(op_at, std::string(key->name) + " takes '=' or '!=', got '" + std::string(OpText(op)) + "'");
    }
    Filter::Term term{key->field, op, {}, {}};
    while (true) {
      SkipSpaces();
      const size_t value_at = pos_;
      const std::string value = ReadValue();
      AddValue(*key, value, value_at, &term);
      SkipSpaces();
      if (AtEnd() || text_[pos_] != '|') break;
      if (ordered) Fail(pos_, "'|' lists values for '=' and '!=' only");
      ++pos_;
    }
    return term;
  }

  Op ReadOp(const Key& key) {
    const std::string_view rest = text_.substr(pos_);
    for (const auto& [text, op] : std::vector<std::pair<std::string_view, Op>>{
             {"!=", Op::kNotEqual}, {"<=", Op::kLessEqual}, {">=", Op::kGreaterEqual}, {"=", Op::kEqual},
             {"<", Op::kLess}, {">", Op::kGreater}}) {
      if (rest.substr(0, text.size()) == text) {
        pos_ += text.size();
        last_op_ = text;
        return op;
      }
    }
    Fail(pos_, "expected '=', '!=', '<', '<=', '>' or '>=' after '" + std::string(key.name) + "', got '" +
                   std::string(1, text_[pos_]) + "'");
  }

  // A quoted value ('...' or "...", which may hold ',' and '|') or the text
  // up to the next ',' or '|', without surrounding spaces.
  std::string ReadValue() {
    const size_t value_at = pos_;
    if (!AtEnd() && (text_[pos_] == '"' || text_[pos_] == '\'')) {
      const char quote = text_[pos_];
      const size_t close = text_.find(quote, pos_ + 1);
      if (close == std::string_view::npos) Fail(value_at, "this quote is never closed");
      pos_ = close + 1;
      return std::string(text_.substr(value_at + 1, close - value_at - 1));
    }
    while (!AtEnd() && text_[pos_] != ',' && text_[pos_] != '|') ++pos_;
    std::string_view value = text_.substr(value_at, pos_ - value_at);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.remove_suffix(1);
    if (value.empty()) Fail(value_at, "expected a value after '" + std::string(last_op_) + "'");
    return std::string(value);
  }

  void AddValue(const Key& key, const std::string& value, size_t at, Filter::Term* term) const {
    const std::string name(key.name);
    switch (key.kind) {
      case Kind::kInteger: {
        long long number = 0;
        const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
        if (error != std::errc() || end != value.data() + value.size()) {
          Fail(at, name + " must be an integer, got " + Quoted(value));
        }
        term->numbers.push_back(static_cast<double>(number));
        break;
      }
      case Kind::kNumber: {
        char* end = nullptr;
        const double number = std::strtod(value.c_str(), &end);
        if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(number)) {
          Fail(at, name + " must be a number, got " + Quoted(value));
        }
        term->numbers.push_back(number);
        break;
      }
      case Kind::kBoolean:
        if (value == "true" || value == "on") {
          term->numbers.push_back(1);
        } else if (value == "false" || value == "off") {
          term->numbers.push_back(0);
        } else {
          Fail(at, name + " must be true, false, on or off, got " + Quoted(value));
        }
        break;
      case Kind::kChoice:
        if (std::find(key.choices.begin(), key.choices.end(), value) == key.choices.end()) {
          Fail(at, name + " must be one of " + QuotedChoices(key.choices) + ", got " + Quoted(value));
        }
        break;
      case Kind::kText:
        break;
      case Kind::kHexPrefix:
        if (!IsHex(value)) Fail(at, name + " must be a prefix of hexadecimal digits, got " + Quoted(value));
        break;
    }
    term->texts.push_back(key.kind == Kind::kHexPrefix ? Lower(value) : value);
  }

  static std::string JoinNames(const std::vector<std::string_view>& names) {
    std::string text;
    for (std::string_view name : names) text += (text.empty() ? "" : ", ") + std::string(name);
    return text;
  }

  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
  std::string_view last_op_;
};

bool Compare(double actual, Op op, double expected) {
  switch (op) {
    case Op::kEqual: return actual == expected;
    case Op::kNotEqual: return actual != expected;
    case Op::kLess: return actual < expected;
    case Op::kLessEqual: return actual <= expected;
    case Op::kGreater: return actual > expected;
    case Op::kGreaterEqual: return actual >= expected;
  }
  return false;
}

// The number a numeric field has for `run`; nullopt for other fields.
std::optional<double> NumberOf(Field field, const RunFacts& run) {
  const RunParams& p = run.params;
  switch (field) {
    case Field::kWorkers: return p.workers;
    case Field::kServers: return p.architecture == Architecture::kPs ? p.servers : 0;
    case Field::kBatchSize: return p.batch_size;
    case Field::kEpochs: return p.epochs;
    case Field::kLearningRate: return p.learning_rate;
    case Field::kOverlap: return p.overlap ? 1 : 0;
    case Field::kBucketBytes: return static_cast<double>(p.bucket_bytes);
    case Field::kPartitionBytes: return static_cast<double>(p.partition_bytes);
    case Field::kPullsInTurn: return p.pulls_in_turn ? 1 : 0;
    case Field::kMaxIterationsPerEpoch: return static_cast<double>(p.max_iterations_per_epoch);
    case Field::kSeed: return static_cast<double>(p.seed);
    case Field::kRepetition: return p.repetition;
    default: return std::nullopt;
  }
}

// Whether one value of a text field matches `run`.
bool TextMatches(Field field, const std::string& value, const RunFacts& run) {
  switch (field) {
    case Field::kArchitecture: return Text(run.params.architecture) == value;
    case Field::kHidden: return JoinInts(run.params.hidden) == value;
    case Field::kDataset: return run.params.dataset == value;
    case Field::kNetwork: return run.params.network.name == value;
    case Field::kSplit: return run.split == value;
    case Field::kStatus: return Text(run.state) == value;
    case Field::kTag: return std::find(run.tags.begin(), run.tags.end(), value) != run.tags.end();
    case Field::kExperiment:
      return std::find(run.experiments.begin(), run.experiments.end(), value) != run.experiments.end();
    case Field::kKey: return run.run_key.substr(0, value.size()) == value;
    case Field::kTrainer: return run.trainer_sha256.substr(0, value.size()) == value;
    default: return false;
  }
}

bool TermMatches(const Filter::Term& term, const RunFacts& run) {
  if (const std::optional<double> actual = NumberOf(term.field, run)) {
    if (term.op == Op::kNotEqual) {
      return std::none_of(term.numbers.begin(), term.numbers.end(), [&](double n) { return *actual == n; });
    }
    return std::any_of(term.numbers.begin(), term.numbers.end(),
                       [&](double n) { return Compare(*actual, term.op, n); });
  }
  const bool any = std::any_of(term.texts.begin(), term.texts.end(),
                               [&](const std::string& value) { return TextMatches(term.field, value, run); });
  return term.op == Op::kNotEqual ? !any : any;
}

}  // namespace

Filter Filter::Parse(std::string_view text, std::string source) {
  Filter filter;
  filter.terms_ = Parser(text, source).Terms();
  filter.source_ = std::move(source);
  filter.text_ = std::string(text);
  return filter;
}

bool Filter::Matches(const RunFacts& run) const {
  return std::all_of(terms_.begin(), terms_.end(), [&](const Term& term) { return TermMatches(term, run); });
}

std::string Filter::NoMatch(std::string_view among) const {
  return source_ + " " + text_ + " matches none of " + std::string(among);
}

}  // namespace dmlbench

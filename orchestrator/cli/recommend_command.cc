// `dmlbench model recommend`: the configuration, number of hosts and
// instance type that finish a training by a deadline for the least money,
// or fastest within a budget, from one stored fit and an instance catalog
// (orchestrator/recommend/). Every epoch time and interval it prints is the
// one `model predict` prints for the configuration its row names (the
// settings are in --json as `predict_settings`); totals and costs are those
// times the epochs and the price. What it prints for people is
// recommend/answer.h's. Reads the database only.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/table.h"
#include "orchestrator/core/link_text.h"
#include "orchestrator/launch/cluster/links.h"
#include "orchestrator/model/coverage.h"
#include "orchestrator/model/models.h"
#include "orchestrator/model/observations.h"
#include "orchestrator/recommend/answer.h"
#include "orchestrator/recommend/recommend.h"

namespace dmlbench {
namespace {

struct RecommendOptions {
  std::string catalog;
  std::vector<int> hidden = {128, 32};
  std::int64_t samples = kFashionMnistTrainSamples;
  int epochs = 0;
  std::vector<std::string> architectures = {"ring", "mpi", "ps", "p2p"};
  std::vector<int> workers;
  std::vector<int> servers = {1};
  std::vector<int> batch_sizes = {100};
  std::string model;                     // "" = DefaultModelName(), or the model of --fit
  std::optional<std::int64_t> fit_id;
  std::string deadline;                  // DURATION
  std::optional<double> budget;
  int top = 10;
  bool json = false;
};

std::string Number(double value, const char* format = "%.4g") {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// The shortest of the usual forms that reads back as exactly `value`.
std::string Exact(double value) {
  for (const char* format : {"%g", "%.10g", "%.17g"}) {
    const std::string text = Number(value, format);
    if (std::stod(text) == value) return text;
  }
  return Number(value, "%.17g");
}

// The settings `model predict` takes for the configuration, reading back
// exactly the values recommend predicted.
std::string PredictSettings(const ModelConfig& c) {
  std::string widths;
  for (int width : c.hidden) widths += (widths.empty() ? "" : ",") + std::to_string(width);
  std::string text = "architecture=" + std::string(Text(c.architecture)) + " workers=" + std::to_string(c.workers);
  if (c.architecture == Architecture::kPs) text += " servers=" + std::to_string(c.servers);
  text += " batch_size=" + std::to_string(c.batch_size) + " hidden=" + widths +
          " train_samples=" + std::to_string(c.train_samples);
  std::string bandwidth = FormatBandwidth(c.network.bandwidth_bits_per_s);
  if (ParseBandwidth(bandwidth) != c.network.bandwidth_bits_per_s) bandwidth = Number(c.network.bandwidth_bits_per_s, "%.0f") + "bit";
  text += " bandwidth=" + bandwidth;
  if (c.network.latency_s > 0) text += " latency=" + Exact(c.network.latency_s) + "s";
  if (c.cpu_cores > 0) text += " cpu=" + Exact(c.cpu_cores);
  return text;
}

std::string Label(const ModelConfig& config) { return ConfigLabel(config); }

nlohmann::json EstimateJson(const Estimate& e, std::size_t rank, const Goal& goal) {
  nlohmann::json json = {{"rank", rank},
                         {"architecture", Text(e.config.architecture)},
                         {"workers", e.config.workers},
                         {"servers", e.config.servers},
                         {"batch_size", e.config.batch_size},
                         {"configuration", Label(e.config)},
                         {"instance_type", e.type->name},
                         {"hosts", e.hosts},
                         {"predict_settings", PredictSettings(e.config)},
                         {"epoch_s", e.epoch_s},
                         {"epoch_low_s", nullptr},
                         {"epoch_high_s", nullptr},
                         {"interval_level", nullptr},
                         {"total_s", e.total_s},
                         {"total_low_s", e.total_low_s},
                         {"total_high_s", e.total_high_s},
                         {"cost", e.cost},
                         {"cost_low", e.cost_low},
                         {"cost_high", e.cost_high},
                         {"limited_by", e.limited_by},
                         {"meets_at_upper_end", e.meets_at_upper_end},
                         {"beyond_calibration", e.beyond},
                         {"assumption", e.assumption}};
  if (e.epoch_interval) {
    json["epoch_low_s"] = e.epoch_interval->low_s;
    json["epoch_high_s"] = e.epoch_interval->high_s;
    json["interval_level"] = e.epoch_interval->level;
  }
  json["crosses_goal"] = e.epoch_interval && !e.meets_at_upper_end;
  (void)goal;
  return json;
}

nlohmann::json RuledOutJson(const RuledOut& r) {
  nlohmann::json json = {{"instance_type", r.type->name}, {"reason", r.reason}};
  if (r.config) {
    json["configuration"] = Label(*r.config);
    json["predict_settings"] = PredictSettings(*r.config);
  } else {
    json["configuration"] = "(every configuration)";
  }
  return json;
}

// The answer for people (recommend/answer.h), printed.
void PrintRecommendation(const Recommendation& result, const Catalog& catalog, const Goal& goal,
                         const RecommendOptions& o, const PerformanceModel& model, const ModelFitRecord& fit,
                         const ModelData& data) {
  AnswerContext context;
  context.catalog = &catalog;
  context.goal = goal;
  context.model = std::string(model.name());
  context.fit_id = fit.fit_id;
  context.fit_has_interval = !fit.intervals.empty();
  context.samples = o.samples;
  context.epochs = o.epochs;
  context.top = static_cast<std::size_t>(o.top);
  if (!result.ranked.empty()) context.held_out = Validate(model, fit, data).summaries;
  for (const AnswerPart& part : Answer(result, context)) {
    std::cout << part.text;
    if (part.table) PrintTable(std::cout, *part.table);
  }
}

void RecommendCommand(const GlobalOptions& global, const RecommendOptions& o) {
  if (o.deadline.empty() == !o.budget.has_value()) throw RecommendError("give either --deadline or --budget");
  Goal goal;
  if (!o.deadline.empty()) {
    goal.deadline_s = ParseDuration(o.deadline);
  } else {
    if (!(*o.budget > 0)) throw RecommendError("--budget must be greater than 0, got " + Number(*o.budget));
    goal.kind = Goal::Kind::kBudget;
    goal.budget = *o.budget;
  }
  const Catalog catalog = LoadCatalog(o.catalog);
  CandidateSpace space;
  for (const std::string& name : o.architectures) {
    const auto architecture = FromText<Architecture>(name);
    if (!architecture) throw RecommendError("--architecture must be ring, mpi, ps or p2p, got \"" + name + "\"");
    space.architectures.push_back(*architecture);
  }
  space.workers = o.workers;
  space.servers = o.servers;
  space.batch_sizes = o.batch_sizes;
  const Workload workload{o.hidden, o.samples, o.epochs};

  const std::unique_ptr<Store> store = OpenExistingReadOnly(global.db);
  const std::string model_name = o.model.empty() && !o.fit_id ? std::string(DefaultModelName()) : o.model;
  const auto [model, fit] = ChosenFit(*store, model_name, o.fit_id);
  const ModelData data = LoadModelData(*store, {});
  const CalibrationCoverage coverage(fit, data);
  const Recommendation result =
      Recommend(*model, fit, coverage, CalibratedHostsOf(*store, fit), catalog, space, workload, goal);

  if (!o.json) {
    PrintRecommendation(result, catalog, goal, o, *model, fit, data);
    return;
  }
  nlohmann::json ranked = nlohmann::json::array();
  for (std::size_t i = 0; i < result.ranked.size(); ++i) ranked.push_back(EstimateJson(result.ranked[i], i + 1, goal));
  nlohmann::json ruled_out = nlohmann::json::array();
  for (const RuledOut& r : result.ruled_out) ruled_out.push_back(RuledOutJson(r));
  nlohmann::json json = {
      {"fit", fit.fit_id},
      {"model", model->name()},
      {"catalog", {{"path", catalog.source_path}, {"currency", catalog.currency}, {"prices", catalog.prices},
                   {"prices_as_of", catalog.prices_as_of}}},
      {"workload", {{"hidden", o.hidden}, {"train_samples", o.samples}, {"epochs", o.epochs}}},
      {"goal", goal.kind == Goal::Kind::kDeadline ? nlohmann::json{{"deadline_s", goal.deadline_s}}
                                                  : nlohmann::json{{"budget", goal.budget}}},
      {"candidates", result.candidates},
      {"ranked", ranked},
      {"at_point_estimate", result.ranked.empty() ? nlohmann::json(nullptr) : nlohmann::json(1)},
      {"at_upper_end", result.sure ? nlohmann::json(*result.sure + 1) : nlohmann::json(nullptr)},
      {"ruled_out", ruled_out}};
  std::cout << json.dump(2) << "\n";
}

}  // namespace

void AddModelRecommendCommand(CLI::App* model, const GlobalOptions& global) {
  auto o = std::make_shared<RecommendOptions>();
  CLI::App* recommend = model->add_subcommand(
      "recommend", "the configuration and instance type that finish a training by a deadline for the least cost, "
                   "or fastest within a budget, each with its prediction interval (reads the database only)");
  recommend->add_option("--catalog", o->catalog, "instance catalog (schemas/instance-catalog.md)")->required();
  recommend->add_option("--epochs", o->epochs, "epochs to train")->required()->check(CLI::PositiveNumber);
  recommend->add_option("--samples", o->samples, "training samples per epoch")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  recommend->add_option("--hidden", o->hidden, "hidden layer widths, comma-separated (default 128,32)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  recommend->add_option("--architecture", o->architectures, "ring, mpi, ps, p2p, comma-separated (default all)")
      ->delimiter(',');
  recommend->add_option("--workers", o->workers, "worker counts to try, comma-separated (e.g. 1,2,4,8)")
      ->required()
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  recommend->add_option("--servers", o->servers, "ps server counts to try, comma-separated (default 1)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  recommend->add_option("--batch", o->batch_sizes, "batch sizes per worker to try, comma-separated (default 100)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  recommend->add_option("--model", o->model,
                        "the model whose latest fit predicts (default " + std::string(DefaultModelName()) + ")");
  recommend->add_option("--fit", o->fit_id, "predict with this stored fit (its id, as `model fit` prints it)");
  recommend->add_option("--deadline", o->deadline, "DURATION: the training must end within it, e.g. 2h, 90m, 1h30m");
  recommend->add_option("--budget", o->budget, "AMOUNT: the most it may cost, in the catalog's currency");
  recommend->add_option("--top", o->top, "rows of each table (default 10)")->check(CLI::PositiveNumber);
  recommend->add_flag("--json", o->json, "every candidate kept and ruled out, as JSON");
  recommend->callback([&global, o] { RecommendCommand(global, *o); });
}

}  // namespace dmlbench

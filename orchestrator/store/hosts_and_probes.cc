#include "orchestrator/store/store.h"

#include "orchestrator/store/store_impl.h"

#include <cstdio>
#include <limits>

#include <nlohmann/json.hpp>

#include "orchestrator/store/checked_text.h"

namespace dmlbench {
namespace {

// The largest CPU share a host's cpu_cores tag may say, in cores.
constexpr double kMaxCpuCores = 4096;

// The tags of host `host_id` from its tags_json `text`, checked.
HostTags ReadHostTags(const std::string& db, std::int64_t host_id, const std::string& text) {
  const std::string place = ColumnPlace(db, "host " + std::to_string(host_id), "hosts.tags_json");
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  if (!json.is_object()) throw StoreError(place + " is not a JSON object, got " + CellQuoted(text), -1);
  HostTags tags;
  for (const auto& [key, value] : json.items()) {
    tags.tags[key] = value.is_string() ? value.get<std::string>() : value.dump();
  }
  if (const auto cores = tags.tags.find("cpu_cores"); cores != tags.tags.end()) {
    tags.cpu_cores = CheckedNumberText(place + " cpu_cores", cores->second, 0, kMaxCpuCores);
  }
  return tags;
}

// A CPU share as HostCpuShares gives it ("%g", "0" uncapped).
std::string ShareText(double cpu_cores) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", cpu_cores);
  return text;
}

}  // namespace

std::int64_t Store::AddHost(const HostFacts& facts, double now_unix_s) {
  return WithStoreErrors(path_, [&] {
    const std::string tags = facts.tags_json.empty() ? "{}" : facts.tags_json;
    SQLite::Statement upsert(impl_->db, R"(
      INSERT INTO hosts (name, address, cpu_model, cores, memory_bytes, kernel, mpi_version, provider,
                         tags_json, first_seen_unix_s, last_seen_unix_s)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (name, address, cpu_model, cores, memory_bytes, kernel, mpi_version, provider, tags_json)
      DO UPDATE SET last_seen_unix_s = excluded.last_seen_unix_s
      RETURNING host_id)");
    upsert.bind(1, facts.name);
    upsert.bind(2, facts.address);
    upsert.bind(3, facts.cpu_model);
    upsert.bind(4, facts.cores);
    upsert.bind(5, facts.memory_bytes);
    upsert.bind(6, facts.kernel);
    upsert.bind(7, facts.mpi_version);
    upsert.bind(8, facts.provider);
    upsert.bind(9, tags);
    upsert.bind(10, now_unix_s);
    upsert.bind(11, now_unix_s);
    upsert.executeStep();
    const std::int64_t id = upsert.getColumn(0).getInt64();
    upsert.reset();
    return id;
  });
}

std::set<std::string> Store::HostCpuShares(const std::vector<std::int64_t>& host_ids) const {
  return WithStoreErrors(path_, [&] {
    std::set<std::string> shares;
    SQLite::Statement select(impl_->db, "SELECT h.tags_json FROM hosts h WHERE h.host_id = ?");
    for (const std::int64_t id : host_ids) {
      select.bind(1, id);
      if (select.executeStep()) {
        shares.insert(ShareText(ReadHostTags(path_, id, select.getColumn(0).getString()).cpu_cores));
      }
      select.reset();
    }
    return shares;
  });
}

std::map<std::int64_t, std::set<std::string>> Store::CompleteRunCpuShares() const {
  std::map<std::int64_t, std::set<std::string>> shares;
  for (const auto& [run_id, hosts] : CompleteRunHostTags()) {
    for (const HostTags& host : hosts) shares[run_id].insert(ShareText(host.cpu_cores));
  }
  return shares;
}

std::map<std::int64_t, std::vector<HostTags>> Store::CompleteRunHostTags() const {
  return WithStoreErrors(path_, [&] {
    std::map<std::int64_t, std::vector<HostTags>> tags;
    SQLite::Statement select(impl_->db, R"(
      SELECT r.run_id, h.host_id, h.tags_json
      FROM runs r JOIN attempt_hosts ah ON ah.attempt_id = r.complete_attempt_id JOIN hosts h ON h.host_id = ah.host_id
      WHERE r.status = 'complete' ORDER BY r.run_id, h.host_id)");
    while (select.executeStep()) {
      tags[select.getColumn(0).getInt64()].push_back(
          ReadHostTags(path_, select.getColumn(1).getInt64(), select.getColumn(2).getString()));
    }
    return tags;
  });
}

void Store::AddLinkProbe(const std::vector<LinkProbeRow>& rows) {
  return WithStoreErrors(path_, [&] {
    SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement insert(impl_->db, R"(
      INSERT INTO link_probes (profile, bandwidth_bits_per_s, latency_s, message_bytes, repetitions,
        median_one_way_s, alpha_s, bandwidth_bytes_per_s, time_unix_s, hosts)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?))");
    for (const LinkProbeRow& r : rows) {
      insert.bind(1, r.profile);
      insert.bind(2, r.bandwidth_bits_per_s);
      insert.bind(3, r.latency_s);
      insert.bind(4, r.message_bytes);
      insert.bind(5, r.repetitions);
      insert.bind(6, r.median_one_way_s);
      insert.bind(7, r.alpha_s);
      insert.bind(8, r.bandwidth_bytes_per_s);
      insert.bind(9, r.time_unix_s);
      insert.bind(10, r.hosts);
      insert.exec();
      insert.reset();
    }
    transaction.commit();
  });
}

std::vector<LinkProbeRow> Store::LatestCalibrationProbes() const {
  return WithStoreErrors(path_, [&] {
    SQLite::Statement select(impl_->db, R"(
      SELECT p.profile, p.bandwidth_bits_per_s, p.latency_s, p.message_bytes, p.repetitions, p.median_one_way_s,
             p.alpha_s, p.bandwidth_bytes_per_s, p.time_unix_s, p.hosts, p.link_probe_id
      FROM link_probes p
      WHERE p.split = 'calibration' AND p.time_unix_s = (
        SELECT max(q.time_unix_s) FROM link_probes q
        WHERE q.split = 'calibration' AND q.bandwidth_bits_per_s = p.bandwidth_bits_per_s
          AND q.latency_s = p.latency_s)
      ORDER BY p.bandwidth_bits_per_s, p.latency_s, p.link_probe_id)");
    std::vector<LinkProbeRow> rows;
    while (select.executeStep()) {
      // What every model fits its links from: checked (checked_text.h).
      LinkProbeRow row;
      row.link_probe_id = select.getColumn(10).getInt64();
      const std::string probe = "link probe " + std::to_string(row.link_probe_id);
      const auto place = [&](std::string_view column) {
        return ColumnPlace(path_, probe, "link_probes." + std::string(column));
      };
      const auto cell = [&](int index) { return CellOf(select.getColumn(index)); };
      row.profile = select.getColumn(0).getString();
      row.bandwidth_bits_per_s = CheckedReal(place("bandwidth_bits_per_s"), cell(1), 0);
      row.latency_s = CheckedReal(place("latency_s"), cell(2), 0);
      row.message_bytes =
          CheckedInteger(place("message_bytes"), cell(3), 1, std::numeric_limits<std::int64_t>::max());
      row.repetitions =
          static_cast<int>(CheckedInteger(place("repetitions"), cell(4), 1, std::numeric_limits<int>::max()));
      row.median_one_way_s = CheckedPositiveReal(place("median_one_way_s"), cell(5));
      row.alpha_s = CheckedReal(place("alpha_s"), cell(6), -kNoBound);
      row.bandwidth_bytes_per_s = CheckedPositiveReal(place("bandwidth_bytes_per_s"), cell(7));
      row.time_unix_s = CheckedReal(place("time_unix_s"), cell(8), -kNoBound);
      row.hosts = select.getColumn(9).getString();
      rows.push_back(std::move(row));
    }
    return rows;
  });
}

}  // namespace dmlbench

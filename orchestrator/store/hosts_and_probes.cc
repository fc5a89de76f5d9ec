#include "orchestrator/store/store.h"

#include "orchestrator/store/store_impl.h"

namespace dmlbench {
namespace {
// A host's CPU share as HostCpuShares gives it.
constexpr char kHostShare[] = "printf('%g', CAST(json_extract(h.tags_json, '$.cpu_cores') AS REAL))";
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
    SQLite::Statement select(impl_->db, std::string("SELECT ") + kHostShare + " FROM hosts h WHERE h.host_id = ?");
    for (const std::int64_t id : host_ids) {
      select.bind(1, id);
      if (select.executeStep()) shares.insert(select.getColumn(0).getString());
      select.reset();
    }
    return shares;
  });
}

std::map<std::int64_t, std::set<std::string>> Store::CompleteRunCpuShares() const {
  return WithStoreErrors(path_, [&] {
    std::map<std::int64_t, std::set<std::string>> shares;
    SQLite::Statement select(impl_->db, std::string("SELECT DISTINCT r.run_id, ") + kHostShare + R"(
      FROM runs r JOIN attempt_hosts ah ON ah.attempt_id = r.complete_attempt_id
      JOIN hosts h ON h.host_id = ah.host_id)");
    while (select.executeStep()) shares[select.getColumn(0).getInt64()].insert(select.getColumn(1).getString());
    return shares;
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
      LinkProbeRow row;
      row.profile = select.getColumn(0).getString();
      row.bandwidth_bits_per_s = select.getColumn(1).getDouble();
      row.latency_s = select.getColumn(2).getDouble();
      row.message_bytes = select.getColumn(3).getInt64();
      row.repetitions = select.getColumn(4).getInt();
      row.median_one_way_s = select.getColumn(5).getDouble();
      row.alpha_s = select.getColumn(6).getDouble();
      row.bandwidth_bytes_per_s = select.getColumn(7).getDouble();
      row.time_unix_s = select.getColumn(8).getDouble();
      row.hosts = select.getColumn(9).getString();
      row.link_probe_id = select.getColumn(10).getInt64();
      rows.push_back(std::move(row));
    }
    return rows;
  });
}

}  // namespace dmlbench

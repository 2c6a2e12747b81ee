// Rows written as other clusters publish theirs (data/unseen_rows.csv: H200, H20, A800, H800,
// H100 PCIe, A100 PCIe, L40S, Perlmutter, V100 (p3dn), A10G (g5), MI300X / MI325X, B200 / B300,
// GB200 / GB300 partial and multi-rack, EFA, TCPX(O), Slingshot, SHARP, nccl-tests column
// variants), each with the reading
// its text implies: the preset, nodes and GPUs per node, fabric, NICs and their speed, SHARP, NVLS
// as the stated NCCL version has it, a forced algorithm and protocol, the size and the measured
// time. The times are invented: this file tests reading only (bench_calibration never runs it). A
// row whose GPU has no preset must fail at `system`.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../core/error_of.hpp"
#include "lockstep/core/error.hpp"
#include "lockstep/scenario/calibration_row.hpp"

namespace lockstep {
namespace {

struct Expected {
  std::map<std::string, std::string> col;  // header name -> field
  std::size_t line = 0;
  const std::string& operator[](const std::string& name) const {
    static const std::string none;
    const auto it = col.find(name);
    return it == col.end() ? none : it->second;
  }
};

std::vector<Expected> expectations(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split_csv_line(line);
  std::vector<Expected> out;
  for (std::size_t n = 2; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const std::vector<std::string> f = split_csv_line(line);
    Expected e;
    e.line = n;
    for (std::size_t i = 0; i < header.size() && i < f.size(); ++i) e.col[header[i]] = f[i];
    out.push_back(std::move(e));
  }
  return out;
}

// The reading of one row, as the file's expect_* columns write it; "error: <field>" when the
// row does not read.
std::map<std::string, std::string> reading(const CalibrationRow& row) {
  std::map<std::string, std::string> r;
  try {
    const CalibrationCase c = calibration_case(row);
    const PresetCluster p = resolve_preset(c.preset);
    const NcclCluster n = calibration_nccl_cluster(c, p);
    r["expect_preset"] = p.system.name;
    r["expect_nodes"] = std::to_string(p.nodes);
    r["expect_gpus_per_node"] = std::to_string(p.gpus_per_node);
    r["expect_fabric"] = p.fabric.name;
    r["expect_nics"] = std::to_string(p.nics_per_node);
    r["expect_nic_gbps"] = std::to_string(std::lround(p.nic_speed.gigabits_per_second()));
    r["expect_sharp"] = p.sharp ? "1" : "0";
    r["expect_nvls"] = n.nvls ? "1" : "0";
    r["expect_nccl"] = c.nccl_version;
    r["expect_bytes"] = std::to_string(c.tuner.bytes.count());
    r["expect_algo"] = c.tuner.algo ? nccl::algorithm_name(c.tuner.algo) : "auto";
    r["expect_proto"] = c.tuner.proto ? nccl::to_string(*c.tuner.proto) : "auto";
    r["expect_time_us"] = std::to_string(std::lround(c.measured_time_us * 100));
  } catch (const InputError& e) {
    r["expect_error"] = e.field();
  }
  return r;
}

TEST(UnseenRows, EachRowReadsAsItsTextDescribes) {
  const std::string path =
      std::string(LOCKSTEP_SOURCE_DIR) + "/tests/unit/scenario/data/unseen_rows.csv";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const std::vector<CalibrationRow> rows = read_calibration_csv(in, path);
  const std::vector<Expected> want = expectations(path);
  ASSERT_EQ(rows.size(), want.size());
  ASSERT_GE(rows.size(), 40u);
  std::size_t wrong = 0, refused = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::map<std::string, std::string> got = reading(rows[i]);
    const Expected& w = want[i];
    bool ok = true;
    if (!w["expect_error"].empty()) {
      ok = got.count("expect_error") != 0 && got.at("expect_error") == w["expect_error"];
      EXPECT_TRUE(ok) << "line " << w.line << " (" << rows[i].system << ") should fail at "
                      << w["expect_error"];
      refused += ok ? 1 : 0;
    } else if (got.count("expect_error") != 0) {
      ok = false;
      ADD_FAILURE() << "line " << w.line << " (" << rows[i].system << ") refused at "
                    << got.at("expect_error");
    } else {
      for (const auto& [name, value] : got) {
        std::string expect = w[name];
        if (expect.empty() && name != "expect_nccl") continue;  // not checked for this row
        if (name == "expect_time_us") expect = std::to_string(std::lround(std::stod(expect) * 100));
        if (value != expect) {
          ok = false;
          ADD_FAILURE() << "line " << w.line << " (" << rows[i].system << "): " << name << " read '"
                        << value << "', expected '" << expect << "'";
        }
      }
    }
    wrong += ok ? 0 : 1;
  }
  EXPECT_EQ(wrong, 0u) << "rows read wrongly, of " << rows.size();
  EXPECT_GE(refused, 3u);  // GPUs without a preset (MI250X, MI300A, Gaudi)
}

// nccl-tests tables as other sites write them: both placements' columns (out-of-place read, as
// nccl-tests prints it first), a "size" column, milliseconds, bandwidth only.
TEST(UnseenRows, ColumnVariantsOfNcclTestsTables) {
  std::istringstream both(
      "System,GPUs,Nodes,Interconnect,Collective,Size,Out-of-place Time (us),"
      "Out-of-place algbw (GB/s),Out-of-place busbw (GB/s),In-place Time (us)\n"
      "8x H100,16,2,InfiniBand NDR 8x400G,all_reduce,1G,12000,,,11000\n");
  const std::vector<CalibrationRow> a = read_calibration_csv(both, "both.csv");
  ASSERT_EQ(a.size(), 1u);
  const CalibrationCase ca = calibration_case(a[0]);
  EXPECT_EQ(ca.tuner.bytes.count(), 1073741824u);  // nccl-tests' 1G
  EXPECT_DOUBLE_EQ(ca.measured_time_us, 12000);    // out-of-place, not in-place's 11000
  // busbw = 2^30 / 12000 us x 2 x 15/16 = 167.77 GB/s.
  EXPECT_NEAR(ca.measured_busbw_GBps, 1073741824.0 / 12000e3 * 2 * 15 / 16, 1e-9);

  std::istringstream ms(
      "system,gpus,nodes,interconnect,collective,bytes,time_ms\n"
      "DGX B200,8,1,NVSwitch,all_gather,128M,0.5\n");
  const CalibrationCase cm = calibration_case(read_calibration_csv(ms, "ms.csv").at(0));
  EXPECT_DOUBLE_EQ(cm.measured_time_us, 500);
  EXPECT_EQ(cm.tuner.bytes.count(), 134217728u);

  std::istringstream algbw(
      "system,gpus,nodes,interconnect,collective,bytes,algbw\n"
      "8x H200,8,1,NVSwitch,all_reduce,1GB,200\n");
  // S / algbw = 2^30 B / 200 GB/s = 5368.71 us.
  EXPECT_NEAR(calibration_case(read_calibration_csv(algbw, "a.csv").at(0)).measured_time_us,
              1073741824.0 / 200e3, 1e-9);
}

TEST(UnseenRows, AGpuWithoutAPresetIsNamedInOneLine) {
  EXPECT_EQ(error_of([] { read_row_system("8x NVIDIA L40 (PCIe)"); }),
            "system: no system preset has the l40 of '8x NVIDIA L40 (PCIe)'");
  // The L40S has one (l40s); the L40 (no S) is another card.
  EXPECT_EQ(read_row_system("8x NVIDIA L40S (PCIe)").preset, "l40s");
  EXPECT_EQ(read_row_system("8x A100 80GB PCIe").preset, "a100-pcie");
  EXPECT_EQ(read_row_system("NERSC Perlmutter (4x A100 40GB)").preset, "perlmutter");
  EXPECT_EQ(field_of([] { read_row_system("El Capitan (4x MI300A)"); }), "system");
  // Model words whole: an A100's "a10", an NVL4 partition's "l4" are not those GPUs.
  EXPECT_EQ(read_row_system("8x A100 80GB").preset, "dgx-a100");
  EXPECT_EQ(read_row_system("GB200 NVL72; 3x NVL4 partitions").preset, "gb200-nvl72");
  EXPECT_EQ(read_row_system("8x A800 80GB").preset, "hgx-a800");
}

TEST(UnseenRows, ForcedProtocolFromTheAlgorithmColumnOrNcclProto) {
  EXPECT_EQ(read_row_protocol("Ring / LL128", ""), nccl::Proto::LL128);
  EXPECT_EQ(read_row_protocol("ring (LL)", ""), nccl::Proto::LL);
  EXPECT_EQ(read_row_protocol("Tree", "InfiniBand; NCCL_PROTO=Simple"), nccl::Proto::Simple);
  EXPECT_EQ(read_row_protocol("default (not stated)", "HDR"), std::nullopt);
  // Only NCCL_PROTO= counts outside the algorithm column: "LL" in a system name is no protocol.
  EXPECT_EQ(read_row_protocol("Ring", "ALL nodes; LL cluster"), std::nullopt);
}

// NCCL_ALGO's documentation: NVLS since 2.17 (one node), NVLSTree since 2.18, PAT since 2.23.
TEST(UnseenRows, AlgorithmsOlderNcclsLacked) {
  auto cluster = [](const char* system, const char* gpus, const char* nodes, const char* net) {
    CalibrationRow row;
    row.system = system;
    row.gpus = gpus;
    row.nodes = nodes;
    row.interconnect = net;
    row.collective = "all_gather";
    row.bytes = "1M";
    row.time_us = "100";
    const CalibrationCase c = calibration_case(row);
    return std::make_pair(calibration_nccl_cluster(c, resolve_preset(c.preset)), c.tuner);
  };
  EXPECT_FALSE(cluster("8x H100", "8", "1", "NVSwitch; NCCL 2.16.5").first.nvls);
  EXPECT_TRUE(cluster("8x H100", "8", "1", "NVSwitch; NCCL 2.17.1").first.nvls);
  EXPECT_FALSE(cluster("8x H100", "16", "2", "InfiniBand NDR; NCCL 2.17.1").first.nvls);
  EXPECT_TRUE(cluster("8x H100", "16", "2", "InfiniBand NDR; NCCL 2.18.1").first.nvls);
  EXPECT_TRUE(cluster("8x H100", "16", "2", "InfiniBand NDR").first.nvls);  // none stated
  // One GPU per node: PAT all-gather only from 2.23; forcing it on 2.21 finds no algorithm.
  // (Plain variables: clang 14 cannot capture structured bindings in a lambda.)
  const auto old_nccl = cluster("H100 (1 per node)", "8", "8", "InfiniBand NDR; NCCL 2.21.5");
  EXPECT_FALSE(old_nccl.first.pat);
  TunerRequest pat = old_nccl.second;
  pat.algo = Algorithm::Pat;
  EXPECT_EQ(field_of([&] { predict(old_nccl.first, pat); }), "algo");
  const auto new_nccl = cluster("H100 (1 per node)", "8", "8", "InfiniBand NDR; NCCL 2.23.4");
  EXPECT_TRUE(new_nccl.first.pat);
  EXPECT_EQ(predict(new_nccl.first, pat).algo, Algorithm::Pat);
}

TEST(UnseenRows, NcclVersionAsRowsStateIt) {
  EXPECT_EQ(read_row_nccl_version("", "NCCL 2.27.3+cuda12.9"), "2.27.3");
  EXPECT_EQ(read_row_nccl_version("", "nccl-tests 2.17.1; NCCL version not printed"), "");
  EXPECT_EQ(read_row_nccl_version("", "NCCL 2.18.5; aws-ofi-nccl v1.7.3-aws"), "2.18.5");
  EXPECT_EQ(read_row_nccl_version("", "aws-ofi-nccl v1.7.3-aws"), "");
  EXPECT_EQ(read_row_nccl_version("", "nccl-tests 2.20.0; NCCL 2.31.2 (nccl-library=23102)"),
            "2.31.2");
  EXPECT_EQ(read_row_nccl_version("image nccl-tests:pytorch-25.03-nccl-2.26.6-1", ""), "2.26.6");
  EXPECT_EQ(read_row_nccl_version("", "RCCL version not printed (README recommends RCCL 2.26.6)"),
            "");
  EXPECT_EQ(read_row_nccl_version("", "RCCL version 2.21.5+hip6.2"), "2.21.5");
}

}  // namespace
}  // namespace lockstep

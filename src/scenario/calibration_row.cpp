// nccl-tests rows read as clusters (docs/calibration.md "How a row is read"). Each rule reads a
// kind of statement ("4x100G per node", "32 EFA per node", "InfiniBand HDR"), never one row: the
// rows of ../shared/calibration/ are its tests, rows from other clusters its purpose.
#include "lockstep/scenario/calibration_row.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/error.hpp"
#include "row_text.hpp"

namespace lockstep {
namespace {

using row_text::first_number;
using row_text::has;
using row_text::has_model;
using row_text::has_word;
using row_text::lower;
using row_text::word_char;

// Cloud shapes whose name alone fixes the GPU and the network, from the providers' instance
// pages: AWS p4d/p4de (8 x A100, 400 Gbps EFA: 4 x 100G), p5 and p5e (8 x H100 / H200,
// 3,200 Gbps EFA: 32 x 100G); GCP a3-highgpu-8g (H100, GPUDirect-TCPX over 4 x 200G gVNIC),
// a3-megagpu-8g (H100, TCPXO over 8 x 200G), a3-ultragpu-8g (H200, RoCE 8 x 400G), a4-highgpu-8g
// (B200, RoCE 8 x 400G); AWS p6-b200 (B200, 3,200 Gbps EFA: 8 x 400G); Azure ND96asr_v4 /
// ND96amsr_A100_v4 (8 x A100, 8 x HDR 200G InfiniBand), ND MI300X v5 (8 x NDR 400G); AWS
// p3dn.24xlarge (8 x V100 32GB in DGX-1's NVLink mesh, 100 Gbps with EFA: one device) and
// g5.48xlarge (8 x A10G, 100 Gbps with EFA).
// Named systems whose public description fixes the node's NICs: ABCI 2.0's Compute Node (A)
// (ABCI User Guide, "System Overview": 8 x A100 SXM4 40GB, InfiniBand HDR (200 Gbps) x 4).
struct Shape {
  const char* name;  // a token of the system text
  const char* preset;
  const char* fabric;
  std::uint32_t nics;
  double gbps;
};
constexpr Shape kShapes[] = {
    {"p4d", "dgx-a100", "efa", 4, 100},
    {"p4de", "dgx-a100", "efa", 4, 100},
    {"p5", "hgx-h100", "efa", 32, 100},
    {"p5e", "hgx-h200", "efa", 32, 100},
    {"p5en", "hgx-h200", "efa", 0, 0},  // EFAv3: the count per node differs from p5's
    {"a3-highgpu-8g", "hgx-h100", "tcpx", 4, 200},
    {"a3-megagpu-8g", "hgx-h100", "tcpxo", 8, 200},
    {"a3-ultragpu-8g", "hgx-h200", "roce-400g", 8, 400},
    {"nd96asr_v4", "dgx-a100", "ib-hdr", 8, 200},
    {"nd96amsr_a100_v4", "dgx-a100", "ib-hdr", 8, 200},
    {"nd96isr_mi300x_v5", "mi300x", "ib-ndr", 8, 400},
    {"nd_mi300x_v5", "mi300x", "ib-ndr", 8, 400},
    {"p6-b200", "hgx-b200", "efa", 8, 400},
    {"a4-highgpu-8g", "hgx-b200", "roce-400g", 8, 400},
    {"abci 2.0 compute node (a)", "dgx-a100", "ib-hdr", 4, 200},
    {"p3dn.24xlarge", "dgx1-v100", "efa", 1, 100},
    {"g5.48xlarge", "a10g", "efa", 1, 100},
};
// Shape names as the text may shorten them: "p5.48xlarge", "a3-highgpu", "a3-megagpu-8g".
bool names_shape(const std::string& s, std::string_view shape) {
  std::string_view base = shape;
  if (base.size() > 3 && base.substr(base.size() - 3) == "-8g") base.remove_suffix(3);
  for (std::size_t at = s.find(base); at != std::string::npos; at = s.find(base, at + 1)) {
    const std::size_t end = at + base.size();
    const bool alone_before = at == 0 || !std::isalnum(static_cast<unsigned char>(s[at - 1]));
    const bool alone_after = end == s.size() || !std::isalnum(static_cast<unsigned char>(s[end]));
    if (alone_before && alone_after) return true;
  }
  return false;
}

// GPUs that real clusters publish nccl-tests / rccl-tests rows for but no system preset
// expresses (no NVSwitch board of theirs is modelled, or another vendor's collective library):
// such a row fails naming its GPU, instead of reading as the nearest name ("MI300A" is an APU
// of 4 per node, not an MI300X). Whole model words only: "a10" is not in "a100", "l4" not in
// "nvl4".
std::string gpu_without_preset(const std::string& s) {
  static const std::regex model(
      R"((?:^|[^a-z0-9])(p100|v100[ -]?pcie|a10|a30|a40|a16|l40|l4|mi300a|mi250x?|mi210|mi100|rtx[ -]?(?:pro[ -]?)?\w*|gaudi[ -]?\d?|tpu\s*v?\d*\w*|trainium\d*|trn\d)(?=[^a-z0-9]|$))");
  std::smatch m;
  if (std::regex_search(s, m, model)) return m[1].str();
  return "";
}

// GPU names, most specific first ("gb200" before "b200", "h200" before "h20").
std::string preset_of_gpu(const std::string& s) {
  if (has(s, "gb300")) return "gb300-nvl72";
  if (has(s, "gb200")) return "gb200-nvl72";
  if (has_model(s, "gb10") || has(s, "dgx spark")) return "dgx-spark";
  if (has(s, "gh200") || has(s, "grace hopper")) return "gh200-quad";
  if (has(s, "b300")) return "hgx-b300";
  if (has(s, "b200")) return "hgx-b200";
  if (has(s, "h200")) return "hgx-h200";
  if (has(s, "h800")) return "hgx-h800";
  if (has(s, "a800")) return "hgx-a800";
  if (has_model(s, "h20")) return "hgx-h20";
  // "H100 NVL" is the PCIe card with NVLink bridges (NVIDIA H100 NVL product brief).
  static const std::regex h100_nvl(R"(h100[ -]?nvl\b)");
  if (has(s, "h100"))
    return has(s, "pcie") || std::regex_search(s, h100_nvl) ? "h100-pcie" : "hgx-h100";
  // NERSC's Perlmutter by name: 4 x A100 40GB all-to-all by NVLink, not a DGX A100 board.
  if (has(s, "perlmutter")) return "perlmutter";
  // A100 PCIe cards (bridged pairs at most, PCIe Gen4 between them): no DGX A100 board.
  if (has(s, "a100") && has(s, "pcie") && !has(s, "sxm")) return "a100-pcie";
  if (has(s, "a100")) return "dgx-a100";
  if (has_model(s, "l40s")) return "l40s";
  // V100 SXM2 boards are DGX-1's hybrid cube mesh (DGX-1, AWS p3): V100 PCIe cards are not.
  if (has_model(s, "v100") && !has(s, "pcie")) return "dgx1-v100";
  if (has_model(s, "a10g")) return "a10g";
  // MI350X: the MI355X's board, xGMI links and NICs at lower clocks (AMD Instinct MI350 series
  // datasheet): collectives see the same links.
  if (has(s, "mi355") || has(s, "mi350")) return "mi355x";
  if (has(s, "mi325")) return "mi325x";
  if (has(s, "mi300")) return "mi300x";
  return "";
}

// "8x H100", "4x NVIDIA H100 per node", "4 per node", "1 GPU each", "x8 per node",
// "2 hosts x 4 GPUs"; a count before a shape ("2x p5.48xlarge") is a node count, not read.
// "2x GB200 Superchip" is 4 GPUs (a GB200 or GB300 superchip carries two Blackwell GPUs and one
// Grace, NVIDIA GB200 NVL72 datasheet; a GH200 one GPU); "2x GB200 NVL72 racks" counts racks.
std::uint32_t node_gpus_of(const std::string& s) {
  static const std::regex times_named(
      R"((\d+)\s*x\s*(?:nvidia\s+|amd\s+)?(a100|a800|h100|h200|h800|h20|b200|b300|gb200|gb300|gh200|gb10|l40s|v100|a10g|mi3\d\d\w?)[^a-z0-9]*(superchip|nvl\d+|racks?)?)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), times_named);
       it != std::sregex_iterator(); ++it) {
    const std::string unit = (*it)[3].str();
    const std::string gpu = (*it)[2].str();
    if (unit.rfind("nvl", 0) == 0 || unit.rfind("rack", 0) == 0) continue;
    const auto n = static_cast<std::uint32_t>(std::stoul((*it)[1].str()));
    return unit == "superchip" && (gpu == "gb200" || gpu == "gb300") ? 2 * n : n;
  }
  // A count standing alone: not the "100" of "H100 GPUs per node".
  static const std::regex per_node(
      R"((?:^|[^\d.a-z])(\d+)\s*(?:gpus?\s*)?(?:per\s+node|/\s*node|each))");
  static const std::regex x_count(R"(x\s*(\d+)\s*(?:gpus?\b|per\s+node))");
  // "8 H100 GPUs per node", "4 NVIDIA A100-SXM4 GPUs".
  static const std::regex count_named(
      R"((?:^|[^\d.a-z])(\d+)\s+(?:nvidia\s+|amd\s+)?(?:instinct\s+)?(?:[ag]?[abhv]\d00|h20|l40s|a10g|mi3\d\d\w?)[\w-]*\s+gpus?\b)");
  for (const std::regex* r : {&per_node, &x_count, &count_named})
    if (const std::uint32_t n = first_number(s, *r); n > 0) return n;
  return 0;
}

Bandwidth standard_speed(std::uint32_t gbps) {
  for (std::uint32_t v : {25u, 50u, 100u, 200u, 400u, 800u, 1600u})
    if (gbps == v) return Bandwidth::gbps(v);
  return {};
}

// An InfiniBand generation at a word start: "NDR", "NDR400", "Quantum-2" (NDR switches),
// "Quantum-X800" (XDR).
bool names_generation(const std::string& s, std::string_view gen) {
  static const std::regex word(R"((?:^|[^a-z0-9_])(hdr|ndr|xdr|edr)(?=\d|[^a-z0-9_]|$))");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), word); it != std::sregex_iterator(); ++it)
    if ((*it)[1].str() == gen) return true;
  if (gen == "ndr") return has(s, "quantum-2");
  if (gen == "xdr") return has(s, "quantum-x800") || has(s, "quantum-3");
  return false;
}

// The InfiniBand preset of a generation word, else of a speed.
std::string ib_fabric(const std::string& s, std::uint32_t gbps) {
  if (names_generation(s, "xdr")) return "ib-xdr";
  if (names_generation(s, "ndr")) return "ib-ndr";
  if (names_generation(s, "hdr") || names_generation(s, "edr")) return "ib-hdr";  // EDR at 100G
  if (gbps >= 800) return "ib-xdr";
  if (gbps >= 400) return "ib-ndr";
  return "ib-hdr";
}

bool exists_fabric(const std::string& name) {
  const auto& all = fabric_presets();
  return std::any_of(all.begin(), all.end(), [&](const FabricPreset& f) { return f.name == name; });
}

// "SHARP" or "NCCL_COLLNET_ENABLE=1" on, unless the clause turns it off ("no SHARP",
// "SHARP disabled", "NCCL_COLLNET_ENABLE=0").
bool sharp_on(const std::string& s) {
  static const std::regex off(R"((?:no|without|disabled?)\s+sharp|sharp\s*(?:=\s*0|off|disabled))");
  if (has(s, "collnet_enable=1")) return true;
  if (has(s, "collnet_enable=0") || std::regex_search(s, off)) return false;
  static const std::regex versioned(R"(\bsharpv\d)");  // "SHARPv3"
  return has_word(s, "sharp") || std::regex_search(s, versioned);
}
bool nvls_off(const std::string& s) {
  static const std::regex off(
      R"(nvls_enable\s*=\s*0|(?:no|without)\s+nvls|nvls\s+(?:off|disabled))");
  return std::regex_search(s, off);
}

}  // namespace

RowSystem read_row_system(const std::string& text) {
  const std::string s = lower(text);
  RowSystem r;
  for (const Shape& shape : kShapes) {
    if (!names_shape(s, shape.name)) continue;
    r.preset = shape.preset;
    r.shape_fabric = shape.fabric;
    r.shape_nics = shape.nics;
    r.shape_nic_speed = Bandwidth::gbps(shape.gbps);
  }
  // A GPU named in the text wins over the shape's (p5.48xlarge (8x H100) agree anyway).
  if (const std::string gpu = gpu_without_preset(s); !gpu.empty())
    throw InputError("system", "no system preset has the " + gpu + " of '" + text + "'");
  if (std::string gpu = preset_of_gpu(s); !gpu.empty()) r.preset = gpu;
  if (r.preset.empty()) throw InputError("system", "no GPU or cloud shape named in '" + text + "'");
  r.node_gpus = node_gpus_of(s);
  r.text = text;
  r.nvlink_partitions = has(s, "nvl") && has(s, "partition");
  return r;
}

RowFabric read_row_fabric(const std::string& text, const SystemPreset& system) {
  const std::string s = lower(text);
  RowFabric f;
  // "4x100G", "8x400G", "4x HDR 200G": count and speed; else "32 EFA", "16 mlx5 HCAs",
  // "single QSFP cable" with the speed apart ("200 Gbps", "HDR 200G per NIC").
  static const std::regex count_speed(R"((\d+)\s*x\s*(?:(?:hdr|ndr|xdr|edr)\s*)?(\d+)\s*g)");
  static const std::regex speed_count(
      R"((?:(?:hdr|ndr|xdr|edr)\s*(\d+)|(\d+)\s*(?:g|gb/s|gbps|gbe))\s*x\s*(\d+)\b)");
  static const std::regex count(
      R"(\b(\d+|single|one|two|dual)(?:\s+|\s*x\s*)(?:efa|mlx5|hcas?\b|nics?\b|rails?\b|ports?\b|qsfp|cx-?\d|connectx))");
  static const std::regex per_gpu(
      R"((\d+|single|one|two|dual)\s+(?:(?:nics?|efas?|hcas?)\s+)?per\s+gpu)");
  static const std::regex one_per_gpu(R"(\b(?:single|one|two|dual)\s+(?:nics?|hcas?)\s+per\s+gpu)");
  // A speed not in parentheses: "(3200 Gbps)" after a count is the node's total.
  static const std::regex speed(R"((?:^|[^(\d])\s*(\d+)\s*(?:g\b|gbe|gb/s|gbps|gbit|g\s))");
  static const std::regex generation_speed(R"(\b(?:hdr|ndr|xdr|edr)(\d+)\b)");  // "NDR400"
  static const std::regex gbe(R"(\d\s*gbe\b)");
  static const std::regex roce_word(R"(\broce|spectrum-x)");  // "RoCEv2" too, not "process"
  static const std::regex per_gpu_after(R"(^\s*(?:nics?\s+)?per\s+gpu)");
  static const std::regex total(R"(\(\s*(\d+)\s*(?:gbps|gb/s)\s*\))");
  std::smatch m;
  std::uint32_t gbps = 0;
  if (std::regex_search(s, m, count_speed)) {
    f.nics = static_cast<std::uint32_t>(std::stoul(m[1].str()));
    gbps = static_cast<std::uint32_t>(std::stoul(m[2].str()));
  } else if (std::regex_search(s, m, speed_count)) {  // "400G x 8", "NDR400 x8"
    gbps = static_cast<std::uint32_t>(std::stoul(m[m[1].matched ? 1 : 2].str()));
    f.nics = static_cast<std::uint32_t>(std::stoul(m[3].str()));
  } else {
    f.nics = first_number(s, count);
    // "one NIC per GPU": the count is per GPU, not the node's.
    if (f.nics == 0 || std::regex_search(s, one_per_gpu)) {
      f.nics = 0;
      f.nics_per_gpu = first_number(s, per_gpu);
    }
    gbps = first_number(s, speed);
    if (gbps == 0) gbps = first_number(s, generation_speed);
    if (standard_speed(gbps).bytes_per_second() == 0) gbps = 0;
    if (gbps == 0 && f.nics > 0) gbps = first_number(s, total) / f.nics;
  }
  // "2x200G per GPU": per GPU, not per node.
  if (f.nics != 0 && m.ready() && !m.empty() &&
      std::regex_search(m.suffix().str(), per_gpu_after)) {
    f.nics_per_gpu = f.nics;
    f.nics = 0;
  }
  f.nic_speed = standard_speed(gbps);
  if (f.nic_speed.bytes_per_second() == 0) gbps = 0;

  // The speed of the NICs the system ships with, for a transport named without one.
  const std::uint32_t shipped_gbps = static_cast<std::uint32_t>(
      std::lround(fabric_preset(system.fabric).nic_speed.gigabits_per_second()));
  const std::uint32_t any_gbps = gbps != 0 ? gbps : shipped_gbps;
  const bool generation = names_generation(s, "hdr") || names_generation(s, "ndr") ||
                          names_generation(s, "xdr") || names_generation(s, "edr");
  auto roce = [&] {  // no RoCE preset at this speed: the 400G one at the stated speed
    f.fabric = fmt::format("roce-{}g", any_gbps);
    if (exists_fabric(f.fabric)) return;
    f.fabric = "roce-400g";
    f.nic_speed = Bandwidth::gbps(any_gbps);
  };
  if (has(s, "ib_disable=1")) {
    f.fabric = "tcp";  // NCCL's socket transport, whatever the NICs
  } else if (has(s, "pollara")) {
    // AMD's Pollara 400 is a RoCEv2 NIC: RoCE at its speed where no Pollara preset exists.
    if (exists_fabric("pollara-400g")) {
      f.fabric = "pollara-400g";
    } else {
      roce();
    }
  } else if (has_word(s, "efa")) {
    f.fabric = "efa";
  } else if (has(s, "tcpxo")) {
    f.fabric = "tcpxo";
  } else if (has(s, "tcpx")) {
    f.fabric = "tcpx";
  } else if (has(s, "slingshot") || has_word(s, "cxi")) {
    f.fabric = "slingshot";
  } else if (std::regex_search(s, roce_word)) {
    roce();
  } else if (has(s, "infiniband") || has_word(s, "ib") || generation || has(s, "quantum")) {
    const bool shipped_ib = system.fabric.rfind("ib-", 0) == 0;
    f.fabric = gbps == 0 && shipped_ib && !generation && !has(s, "quantum-")
                   ? system.fabric
                   : ib_fabric(s, any_gbps);
    if (names_generation(s, "edr") && gbps == 0) f.nic_speed = Bandwidth::gbps(100);
  } else if (has_word(s, "tcp") || has(s, "socket")) {
    f.fabric = "tcp";
  } else if (has(s, "ethernet") || std::regex_search(s, gbe)) {
    roce();  // NCCL's RDMA transport over Ethernet; sockets are named ("TCP", "NCCL_NET=Socket")
  }
  f.sharp = sharp_on(s);
  f.nvls_off = nvls_off(s);
  return f;
}

std::uint32_t read_row_qps(const std::string& system, const std::string& interconnect,
                           const std::string& fabric) {
  const std::string s = lower(system + " " + interconnect);
  static const std::regex set(R"(nccl_ib_qps_per_connection\s*=\s*(\d+))");
  std::smatch m;
  if (std::regex_search(s, m, set))
    return static_cast<std::uint32_t>(std::clamp(std::stoul(m[1].str()), 1ul, 128ul));
  if (fabric.rfind("roce-", 0) != 0) return 0;
  // OCI's RoCE clusters: oracle-quickstart/oci-hpc samples/gpu/nccl_run_allreduce.sh runs
  // nccl-tests with NCCL_IB_QPS_PER_CONNECTION=4 (and NCCL_IB_SPLIT_DATA_ON_QPS=0).
  return has_word(s, "oci") || has(s, "bm.gpu") ? 4 : 0;
}

std::string read_row_nccl_version(const std::string& system, const std::string& interconnect) {
  const std::string s = lower(system + " " + interconnect);
  // NCCL's version code as nccl-tests prints it ("nccl-library=23102": 2.31.2; NCCL_VERSION_CODE
  // is major x 10000 + minor x 100 + patch since 2.9, nccl.h).
  static const std::regex code(R"(nccl[-_ ]library\s*=\s*(\d)(\d\d)(\d\d)\b)");
  std::smatch m;
  if (std::regex_search(s, m, code))
    return fmt::format("{}.{}.{}", std::stoi(m[1].str()), std::stoi(m[2].str()),
                       std::stoi(m[3].str()));
  // "NCCL 2.21.5", "NCCL version 2.19.3+cuda12.3", "nccl-2.26.6-1", "RCCL 2.20.5"; not
  // nccl-tests' own version, a plugin's ("aws-ofi-nccl v1.7.3": NCCL is 2.x), or a version
  // a README only recommends.
  static const std::regex named(
      R"((?:nccl|rccl)2?(-tests?|_tests?)?[^0-9;,()]{0,12}?(2)\.(\d{1,2})(?:\.(\d{1,2}))?)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), named); it != std::sregex_iterator();
       ++it) {
    const std::smatch& v = *it;
    if (v[1].matched) continue;
    const auto at = static_cast<std::size_t>(v.position(0));
    if (s.substr(at >= 12 ? at - 12 : 0, std::min<std::size_t>(at, 12)).find("recommend") !=
        std::string::npos)
      continue;
    return v[4].matched ? fmt::format("2.{}.{}", v[3].str(), v[4].str())
                        : fmt::format("2.{}", v[3].str());
  }
  return "";
}

std::optional<Algorithm> read_row_algorithm(const std::string& text) {
  const std::string s = lower(text);
  std::string w;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && word_char(s[i])) {
      w += s[i];
      continue;
    }
    if (w == "nccl_algo" || w.empty()) {
      w.clear();
      continue;
    }
    if (w == "ring") return Algorithm::Ring;
    if (w == "tree") return Algorithm::Tree;
    if (w == "nvls") return Algorithm::NetReduce;
    if (w == "nvlstree" || w == "nvls_tree") return Algorithm::NvlsTree;
    if (w == "collnet" || w == "collnetdirect" || w == "collnetchain" || w == "collnet_direct" ||
        w == "collnet_chain")
      return Algorithm::CollNet;
    if (w == "pat") return Algorithm::Pat;
    w.clear();
  }
  return std::nullopt;  // "default (not stated)", "n/a (alltoall)", "auto"
}

std::optional<nccl::Proto> read_row_protocol(const std::string& algorithm,
                                             const std::string& other) {
  static const std::regex set(R"(nccl_proto\s*=\s*(ll128|ll|simple)\b)");
  static const std::regex word(R"((?:^|[^a-z0-9_])(ll128|ll|simple)(?=[^a-z0-9_]|$))");
  // The match refers into the searched string: both live until m[1] is read.
  std::smatch m;
  const std::string all = lower(algorithm + " " + other);
  const std::string alg = lower(algorithm);
  if (!std::regex_search(all, m, set) && !std::regex_search(alg, m, word)) return std::nullopt;
  const std::string p = m[1].str();
  return p == "ll" ? nccl::Proto::LL : p == "ll128" ? nccl::Proto::LL128 : nccl::Proto::Simple;
}

CollectiveOp read_row_collective(const std::string& text) {
  std::string s = lower(text);
  if (s.size() > 5 && s.substr(s.size() - 5) == "_perf") s.resize(s.size() - 5);
  std::string squashed;
  for (char ch : s)
    if (ch != '_' && ch != '-' && ch != ' ') squashed += ch;
  if (squashed == "allreduce") return CollectiveOp::AllReduce;
  if (squashed == "allgather") return CollectiveOp::AllGather;
  if (squashed == "reducescatter") return CollectiveOp::ReduceScatter;
  if (squashed == "alltoall") return CollectiveOp::AllToAll;
  if (squashed == "sendrecv") return CollectiveOp::SendRecv;
  if (squashed == "broadcast" || squashed == "bcast") return CollectiveOp::Broadcast;
  if (squashed == "reduce") return CollectiveOp::Reduce;
  return parse_collective_op(s, "collective");
}
}  // namespace lockstep

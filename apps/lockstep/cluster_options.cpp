#include "cluster_options.hpp"

namespace lockstep::cli {
namespace {

// An empty value would read as "not given" (--system "" became hgx-h100): refuse it.
const CLI::Validator kNotEmpty(
    [](const std::string& value) {
      return value.empty() ? std::string("is empty") : std::string();
    },
    "", "not empty");

}  // namespace

void add_cluster_options(CLI::App& cmd, ClusterFlags& flags) {
  cmd.add_option("--system", flags.system,
                 "hgx-h100, gb200-nvl72, ... (docs/presets.md; an unknown name lists them all)")
      ->check(kNotEmpty);
  cmd.add_option(
         "--fabric", flags.fabric,
         "ib-hdr | ib-ndr | ib-xdr | roce-200g | roce-400g | roce-800g | pollara-400g | efa | "
         "tcp | tcpx | tcpxo | slingshot")
      ->check(kNotEmpty);
  cmd.add_option("--nodes", flags.nodes,
                 "nodes (servers; NVL72: 4-GPU trays, any count), default 1")
      ->check(kNotEmpty);
  cmd.add_option("--gpus-per-node", flags.gpus_per_node, "use fewer GPUs per node than shipped")
      ->check(kNotEmpty);
  cmd.add_option("--nics-per-node", flags.nics_per_node, "NICs per node in use")->check(kNotEmpty);
  cmd.add_option("--nic-speed", flags.nic_speed, "NIC speed, e.g. 400Gbps")->check(kNotEmpty);
  cmd.add_option("--domain-nodes", flags.domain_nodes,
                 "nodes per NVLink partition (NVL72: 1-18 trays; default the whole rack)")
      ->check(kNotEmpty);
  cmd.add_flag("--sharp", flags.sharp, "in-network reduction (InfiniBand SHARP)");
  cmd.add_option("--routing", flags.routing,
                 "ecmp | adaptive | spray | d_mod_k | ... (default: the fabric's, docs/routing.md)")
      ->check(kNotEmpty);
  cmd.add_option("--qps-per-connection", flags.qps_per_connection,
                 "queue pairs per connection, NCCL_IB_QPS_PER_CONNECTION (default 1)")
      ->check(kNotEmpty);
}

}  // namespace lockstep::cli

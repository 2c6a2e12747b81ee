#include "cluster_options.hpp"

namespace lockstep::cli {

void add_cluster_options(CLI::App& cmd, ClusterFlags& flags) {
  cmd.add_option("--system", flags.system,
                 "dgx-a100 | hgx-h100 | hgx-h200 | hgx-b200 | gb200-nvl72 | mi300x");
  cmd.add_option(
      "--fabric", flags.fabric,
      "ib-hdr | ib-ndr | ib-xdr | roce-200g | roce-400g | roce-800g | pollara-400g | efa | "
      "tcp | tcpx | tcpxo | slingshot");
  cmd.add_option("--nodes", flags.nodes, "nodes (servers; GB200: 4-GPU trays), default 1");
  cmd.add_option("--gpus-per-node", flags.gpus_per_node, "use fewer GPUs per node than shipped");
  cmd.add_option("--nics-per-node", flags.nics_per_node, "NICs per node in use");
  cmd.add_option("--nic-speed", flags.nic_speed, "NIC speed, e.g. 400Gbps");
  cmd.add_flag("--sharp", flags.sharp, "in-network reduction (InfiniBand SHARP)");
}

}  // namespace lockstep::cli

# End-to-end tests of the lockstep CLI (label "cli"): exit codes, help, malformed inputs and the
# bundled scenarios. Included from the top CMakeLists.txt; they run in the Release build.
set(LOCKSTEP_CLI_DIR ${PROJECT_SOURCE_DIR}/tests/cli)
set(LOCKSTEP_BAD_DIR ${LOCKSTEP_CLI_DIR}/bad)

# A malformed input: `lockstep topo FILE` must exit 2 with one stderr line matching REGEX
# (which names the file, line, column and field).
function(lockstep_bad_input name regex)
  add_test(NAME cli.bad.${name}
           COMMAND sh ${LOCKSTEP_CLI_DIR}/expect_error.sh $<TARGET_FILE:lockstep> "${regex}"
                   topo ${LOCKSTEP_BAD_DIR}/${name}.yaml)
  set_tests_properties(cli.bad.${name} PROPERTIES LABELS cli)
endfunction()

# Bad flags: `lockstep ARGS...` must exit 2 with one stderr line matching REGEX.
function(lockstep_bad_flags name regex)
  add_test(NAME cli.bad_flags.${name}
           COMMAND sh ${LOCKSTEP_CLI_DIR}/expect_error.sh $<TARGET_FILE:lockstep> "${regex}"
                   ${ARGN})
  set_tests_properties(cli.bad_flags.${name} PROPERTIES LABELS cli)
endfunction()

# Success: `lockstep ARGS...` exits 0, stays silent on stderr, and stdout matches REGEX.
function(lockstep_good name regex)
  add_test(NAME cli.${name}
           COMMAND sh ${LOCKSTEP_CLI_DIR}/expect_success.sh $<TARGET_FILE:lockstep> "${regex}"
                   ${ARGN})
  set_tests_properties(cli.${name} PROPERTIES LABELS cli)
endfunction()

# --- malformed scenario files (tests/cli/bad) -----------------------------------------------
lockstep_bad_input(syntax_error "syntax_error.yaml:2:35: YAML syntax error: illegal flow end$")
lockstep_bad_input(tab_indentation "tab_indentation.yaml:3:9: YAML syntax error")
lockstep_bad_input(two_documents "two_documents.yaml:6:1: only one YAML document is allowed")
lockstep_bad_input(empty "empty.yaml:1:1: the scenario file is empty")
lockstep_bad_input(missing_version "missing_version.yaml:1:1: version: missing 'version: 1'")
lockstep_bad_input(wrong_version
  "wrong_version.yaml:1:10: version: unsupported scenario version '3'")
lockstep_bad_input(unknown_top_level_key
  "unknown_top_level_key.yaml:5:1: jobs: unknown top-level key 'jobs' \\(expected one of version")
lockstep_bad_input(missing_cluster
  "missing_cluster.yaml:1:1: cluster: missing required key 'cluster'")
lockstep_bad_input(list_instead_of_map
  "list_instead_of_map.yaml:2:1: cluster: expected a map of settings, got a list$")
lockstep_bad_input(duplicate_key "duplicate_key.yaml:5:3: cluster.k: duplicate key 'k'$")
lockstep_bad_input(negative_seed "negative_seed.yaml:2:7: seed: -1 is out of range")
lockstep_bad_input(unknown_builder
  "unknown_builder.yaml:3:12: cluster.builder: unknown builder 'hypercube' \\(known: .*fat_tree")
lockstep_bad_input(unknown_builder_key "unknown_builder_key.yaml:5:7: cluster.kk: unknown key 'kk'$")
lockstep_bad_input(wrong_type "wrong_type.yaml:4:6: cluster.k: expected an integer, got 'four'$")
lockstep_bad_input(negative_count "negative_count.yaml:4:10: cluster.nodes: -4 is out of range")
lockstep_bad_input(absurd_count
  "absurd_count.yaml:4:10: cluster.nodes: '99999999999999999999999' is absurdly large$")
lockstep_bad_input(odd_fat_tree_k "odd_fat_tree_k.yaml:4:6: cluster.k: must be even")
lockstep_bad_input(unknown_gpu "unknown_gpu.yaml:5:8: cluster.gpu: unknown GPU 'h900' \\(known: ")
lockstep_bad_input(unknown_switch
  "unknown_switch.yaml:5:11: cluster.switch: unknown switch 'qm1234' \\(known: ")
lockstep_bad_input(unknown_preset
  "unknown_preset.yaml:3:11: cluster.system: unknown system 'hgx-h900' \\(known: ")
# from_file graphs, inline
lockstep_bad_input(zero_bandwidth
  "zero_bandwidth.yaml:8:33: cluster.links.0..bandwidth: '0Gbps' is zero$")
lockstep_bad_input(bad_unit
  "bad_unit.yaml:8:33: cluster.links.0..bandwidth: unknown unit 'Gbs' in '400Gbs'")
lockstep_bad_input(negative_latency
  "negative_latency.yaml:8:51: cluster.links.0..latency: '-5ns' is negative$")
lockstep_bad_input(disconnected
  "disconnected.yaml:7:12: cluster.devices.2..id: device 'g2' is not connected to device 'g0'")
lockstep_bad_input(duplicate_ids
  "duplicate_ids.yaml:6:12: cluster.devices.1..id: duplicate device id 'g0' \\(first defined at .*duplicate_ids.yaml:5:12\\)$")
lockstep_bad_input(link_to_unknown_device
  "link_to_unknown_device.yaml:8:18: cluster.links.0..b: unknown device 'g7' \\(not in devices\\)$")
lockstep_bad_input(self_link
  "self_link.yaml:8:18: cluster.links.0..b: link connects device 'g1' to itself$")
lockstep_bad_input(unknown_device_kind
  "unknown_device_kind.yaml:6:22: cluster.devices.1..kind: unknown value 'toaster'")
# from_file graphs in JSON files: errors point into the JSON file
lockstep_bad_input(json_syntax_error
  "graph_syntax_error.json:5:3: JSON syntax error: .*unexpected '\\]'")
lockstep_bad_input(json_duplicate_key
  "graph_duplicate_key.json:4:33: devices.1..kind: duplicate key 'kind'$")
lockstep_bad_input(json_disconnected
  "graph_disconnected.json:5:12: devices.2..id: device 'lonely' is not connected")
lockstep_bad_input(missing_graph_file
  "missing_graph_file.yaml:4:9: cluster.path: cannot read '.*no_such_graph.json': no such file$")
# multi_site
lockstep_bad_input(multi_site_one_site
  "multi_site_one_site.yaml:6:3: cluster.sites: needs at least 2 sites, got 1$")
lockstep_bad_input(multi_site_distance_without_unit
  "multi_site_distance_without_unit.yaml:4:13: cluster.distance: '50' needs a unit \\(m or km\\)$")
lockstep_bad_input(multi_site_bad_site
  "multi_site_bad_site.yaml:8:34: cluster.sites.west.k: must be even")

# --- bad flags --------------------------------------------------------------------------------
lockstep_bad_flags(odd_k "^lockstep: error: --k: must be even" topo --builder fat_tree --k 5)
lockstep_bad_flags(unknown_builder_flag "--builder: unknown builder 'nope'" topo --builder nope)
lockstep_bad_flags(flag_given_twice "--k: given twice$" topo --builder fat_tree --k 4 --k 8)
lockstep_bad_flags(unknown_builder_arg "--colour: unknown key 'colour'$"
  topo --builder fat_tree --k 4 --colour red)
lockstep_bad_flags(bad_format "--format: unknown format 'xml'"
  topo --format xml ${PROJECT_SOURCE_DIR}/scenarios/default.yaml)
lockstep_bad_flags(no_scenario "give a scenario file or --builder NAME" topo)
lockstep_bad_flags(two_scenarios "unexpected argument"
  topo ${PROJECT_SOURCE_DIR}/scenarios/default.yaml ${PROJECT_SOURCE_DIR}/scenarios/default.yaml)
lockstep_bad_flags(missing_scenario_file "scenario: cannot read '/nonexistent.yaml': no such file$"
  topo /nonexistent.yaml)
lockstep_bad_flags(unknown_command "^lockstep: error: " frobnicate)
lockstep_bad_flags(missing_builder_key "--builder rail_optimized: missing required key 'nodes'"
  topo --builder rail_optimized)
# An empty value is not "not given" (--system "" ran hgx-h100). CMake drops empty arguments,
# so a shell passes them.
foreach(flag system fabric nodes)
  add_test(NAME cli.bad_flags.${flag}_empty
           COMMAND sh -c "sh '${LOCKSTEP_CLI_DIR}/expect_error.sh' '$<TARGET_FILE:lockstep>' \
                   '^lockstep: error: --${flag}: is empty' train --${flag} '' --model llama3-8b")
  set_tests_properties(cli.bad_flags.${flag}_empty PROPERTIES LABELS cli)
endforeach()
lockstep_bad_flags(scenario_directory
  "scenario: cannot read '.*scenarios': it is a directory, not a file$"
  topo ${PROJECT_SOURCE_DIR}/scenarios)
lockstep_bad_flags(scenario_dev_zero
  "scenario: cannot read '/dev/zero': it is a character device, not a file$" topo /dev/zero)
lockstep_bad_flags(emit_too_large "--emit: this design is too large to build as a graph"
  topo --builder full_mesh --gpus 200000 --emit ${PROJECT_BINARY_DIR}/cli_emit_too_large.json)

# --- help, version, good runs -----------------------------------------------------------------
lockstep_good(help "Usage: lockstep" --help)
lockstep_good(version "^lockstep [0-9]+\\.[0-9]+\\.[0-9]+$" --version)
lockstep_good(topo_help "lockstep topo --builder NAME" topo --help)
foreach(scenario default fat_tree_16k torus_4x4x4 gb200_nvl72_pair two_sites_50km)
  lockstep_good(topo.${scenario} "^feasible: yes$" topo ${PROJECT_SOURCE_DIR}/scenarios/${scenario}.yaml)
endforeach()
lockstep_good(topo.default_json "\"gpus\": 256,"
  topo --format json ${PROJECT_SOURCE_DIR}/scenarios/default.yaml)
lockstep_good(topo.default_csv "^gpus_count,256$"
  topo --format csv ${PROJECT_SOURCE_DIR}/scenarios/default.yaml)
# Hand-derived: a k=4 fat tree has (k/2)^2 = 4 core switches (and 8 edge, 8 aggregation).
lockstep_good(topo.fat_tree_k4 "^core +4 " topo --builder fat_tree --k 4)
# The same fabric's network-only cost per host, QM9700's twin-port modules counted by default
# (16 CX-7 $32,000 + 20 QM9700 $600,000 + 16 SR4 $11,200 + 24 2xSR4 $26,400 + 16 2xDR4 $24,000
# + 48 patch cords $2,400 = $696,000; tests/unit/topology/clos_test.cpp); per port, 64 SR4
# $44,800 + 32 DR4 $28,800 instead: $708,000.
lockstep_good(topo.fat_tree_k4_network_csv "^network_cost_per_gpu_USD,43500.00$"
  topo --format csv --builder fat_tree --k 4 --gpus_per_node 1 --scale_up none)
lockstep_good(topo.fat_tree_k4_per_port_csv "^network_cost_per_gpu_USD,44250.00$"
  topo --format csv --builder fat_tree --k 4 --gpus_per_node 1 --scale_up none --optics per_port)
# A design too large to build still gets its bill of materials, reported infeasible.
lockstep_good(topo.full_mesh_200k "^feasible: no$" topo --builder full_mesh --gpus 200000)
# Two sites 50 km apart: 5 us/km x 50 km = 250 us one way, plus microseconds inside the sites.
lockstep_good(topo.two_sites_latency "^max one-way latency \\(us\\) +25[0-4]\\.[0-9]+$"
  topo ${PROJECT_SOURCE_DIR}/scenarios/two_sites_50km.yaml)

foreach(scenario default two_sites_50km)
  add_test(NAME cli.topo.deterministic.${scenario}
           COMMAND sh ${LOCKSTEP_CLI_DIR}/same_output.sh $<TARGET_FILE:lockstep> topo
                   ${PROJECT_SOURCE_DIR}/scenarios/${scenario}.yaml --format json)
  set_tests_properties(cli.topo.deterministic.${scenario} PROPERTIES LABELS cli)
endforeach()

# --emit writes a graph that from_file reads back into the same bill of materials, per port and
# per module: the graph carries its cages and UFM links (docs/topology.md "Transceivers per
# module"; the UFM links' round trip is FromFile.ReferenceGraphReadsBackTheSameBillOfMaterials:
# with a partial SU the re-read graph's measured bisection differs, per port as well).
add_test(NAME cli.topo.emit_roundtrip.rail_per_module
         COMMAND sh ${LOCKSTEP_CLI_DIR}/emit_roundtrip.sh $<TARGET_FILE:lockstep>
                 ${PROJECT_BINARY_DIR}/cli_emit_rail_module --builder rail_optimized --nodes 32
                 --nic_ports_per_module 2)
set_tests_properties(cli.topo.emit_roundtrip.rail_per_module PROPERTIES LABELS cli)
add_test(NAME cli.topo.emit_roundtrip.fat_tree
         COMMAND sh ${LOCKSTEP_CLI_DIR}/emit_roundtrip.sh $<TARGET_FILE:lockstep>
                 ${PROJECT_BINARY_DIR}/cli_emit_fat_tree --builder fat_tree --k 4 --optics per_port)
add_test(NAME cli.topo.emit_roundtrip.rail_optimized
         COMMAND sh ${LOCKSTEP_CLI_DIR}/emit_roundtrip.sh $<TARGET_FILE:lockstep>
                 ${PROJECT_BINARY_DIR}/cli_emit_rail --builder rail_optimized --nodes 32
                 --optics per_port)
add_test(NAME cli.topo.emit_roundtrip.torus
         COMMAND sh ${LOCKSTEP_CLI_DIR}/emit_roundtrip.sh $<TARGET_FILE:lockstep>
                 ${PROJECT_BINARY_DIR}/cli_emit_torus --builder torus --dims 4x4x4)
set_tests_properties(cli.topo.emit_roundtrip.fat_tree cli.topo.emit_roundtrip.rail_optimized
                     cli.topo.emit_roundtrip.torus PROPERTIES LABELS cli)
include(${LOCKSTEP_CLI_DIR}/collective.cmake OPTIONAL)
include(${LOCKSTEP_CLI_DIR}/sweep.cmake)
include(${LOCKSTEP_CLI_DIR}/chakra.cmake)
include(${LOCKSTEP_CLI_DIR}/malformed.cmake)
include(${LOCKSTEP_CLI_DIR}/output.cmake)

# The `packet:` section of a scenario (docs/packet-engine.md): read by `lockstep run` when a
# collective or job runs on the packet engine; errors name file:line:column.
lockstep_bad_input(packet_not_a_map "packet_not_a_map.yaml:4:9: packet: expected a map, got a value$")
lockstep_bad_flags(packet_bad_mtu "packet_bad_mtu.yaml:5:8: packet.mtu: 'lots' is not a size"
                   run -q --out ${CMAKE_BINARY_DIR}/cli-packet-bad ${LOCKSTEP_BAD_DIR}/packet_bad_mtu.yaml)
lockstep_bad_flags(packet_unknown_key "packet_unknown_key.yaml:6:29: packet.ecn.kmaxx: unknown key 'kmaxx'$"
                   run -q --out ${CMAKE_BINARY_DIR}/cli-packet-bad ${LOCKSTEP_BAD_DIR}/packet_unknown_key.yaml)
lockstep_bad_flags(packet_window_on_lossless
                   "packet_window_on_lossless.yaml:6:15: packet.congestion: window controllers run on the lossy"
                   run -q --out ${CMAKE_BINARY_DIR}/cli-packet-bad
                   ${LOCKSTEP_BAD_DIR}/packet_window_on_lossless.yaml)
lockstep_bad_flags(packet_ib_cc_on_roce
                   "packet_ib_cc_on_roce.yaml:5:10: packet.ib_cc: InfiniBand congestion control needs"
                   run -q --out ${CMAKE_BINARY_DIR}/cli-packet-bad
                   ${LOCKSTEP_BAD_DIR}/packet_ib_cc_on_roce.yaml)
lockstep_good(packet_as_built "^1048576,16384,float,"
              collective --scenario ${LOCKSTEP_CLI_DIR}/packet_as_built.yaml --format csv)
lockstep_good(packet_section "^1048576,262144,float,ring,Simple,"
              collective --scenario ${LOCKSTEP_CLI_DIR}/packet_mtu.yaml --format csv)
lockstep_good(packet_section_run "^Report: "
              run -q --out ${CMAKE_BINARY_DIR}/cli-packet-run ${LOCKSTEP_CLI_DIR}/packet_mtu.yaml)

# lockstep plan (collective programs and the functional executor).
lockstep_good(plan_verify "verify: correct" plan --op all_reduce --ranks 8 --bytes 1MiB --channels 4 --verify)
lockstep_bad_flags(plan_bad_algo "--algo: all_reduce does not support" plan --algo pat --ranks 8)
lockstep_bad_flags(plan_bad_ranks_per_node "--ranks-per-node" plan --ranks 8 --ranks-per-node 3)
lockstep_good(plan_torus_verify "verify: correct \\(exact\\)" plan --op reduce_scatter
  --algo torus_ring --ranks 24 --torus 2x3x4 --bytes 1003 --type uint8 --verify)
lockstep_good(plan_alltoallv_skew_verify "verify: correct" plan --op alltoallv --ranks 6
  --skew 1.5 --bytes 6000 --verify)
lockstep_bad_flags(plan_bad_torus "--torus: 4x5 does not describe a torus of the 16 ranks"
  plan --algo torus_ring --ranks 16 --torus 4x5)

# --- train: sizes and rates that would leave Time's range (docs/units.md "Limits") -----------
lockstep_bad_flags(train.nic_too_slow
  "^lockstep: error: --nic-speed: '600bps' is below 1.9073 Mb/s, the slowest rate lockstep accepts"
  train --system hgx-h100 --nodes 2 --model llama3-8b --dp 16 --zero 3 --global-batch 16
  --nic-speed 600bps)
lockstep_bad_flags(train.scenario_nic_too_slow
  "train_slow_nic.yaml:4:66: cluster.nic_speed: '600bps' is below 1.9073 Mb/s"
  train ${LOCKSTEP_CLI_DIR}/train_slow_nic.yaml)
# A straggler's late start (slow-gpu:...,delay=) is a collective's fault; a step's is x=.
lockstep_bad_flags(train.slow_gpu_delay
  "^lockstep: error: --fault: 'slow-gpu:rank=1,delay=1ms': delay= is for `lockstep collective`"
  train --system hgx-h100 --nodes 2 --model llama3-8b --dp 16 --zero 3 --global-batch 16
  --fault slow-gpu:rank=1,delay=1ms)
# efficiency is a fraction or `kernels` (the opt-in kernel model, docs/kernel-model.md).
lockstep_bad_flags(train.efficiency_word
  "^lockstep: error: --efficiency: expected a fraction of the peak or kernels, got 'kernel'$"
  train --system hgx-h100 --nodes 1 --model llama3-8b --dp 8 --global-batch 8
  --efficiency kernel)
# Degrees of more ranks than the cluster's GPUs: refused before the memory estimate plans the
# job's collectives on the cluster (mem21c crashed there, planning ranks the graph lacks).
lockstep_bad_flags(train.world_mismatch
  "^lockstep: error: --dp: tp x cp x pp x dp = 8 x 1 x 1 x 4 = 32 ranks but the cluster has 16 GPUs$"
  train --system hgx-h100 --nodes 2 --model llama3-8b --tp 8 --dp 4 --global-batch 16)
lockstep_bad_flags(train.compute_past_time_range
  "^lockstep: error: --peak-tflops: 0.001 TFLOP/s makes one iteration's compute take longer than lockstep's time range \\(106.75 days, 2\\^63 ps\\)$"
  train --system hgx-h100 --nodes 2 --model llama3-8b --dp 16 --zero 3 --global-batch 160
  --peak-tflops 0.001)
lockstep_bad_flags(train.compute_past_time_range_analytical
  "^lockstep: error: --peak-tflops: 0.001 TFLOP/s makes one iteration's compute take longer"
  train --system hgx-h100 --nodes 2 --model llama3-8b --dp 16 --zero 3 --global-batch 160
  --peak-tflops 0.001 --engine analytical)
lockstep_bad_flags(train.scenario_compute_past_time_range
  "train_slow_gpu.yaml:12:16: job.peak_tflops: 0.001 TFLOP/s makes one iteration's compute take longer"
  train ${LOCKSTEP_CLI_DIR}/train_slow_gpu.yaml)
# 2 Mb/s NICs give a long iteration (ZeRO-3 gathers and reductions over every rail); NIC 0's
# link to its leaf at 0.1% of that makes its rail's share 1,000 times longer, past the range.
lockstep_bad_flags(train.comm_past_time_range
  "^lockstep: error: cluster: one iteration's communication would take longer than lockstep's time range"
  train --system hgx-h100 --nodes 2 --model llama3-8b --dp 16 --zero 3 --global-batch 16
  --nic-speed 2Mbps --fault degraded-link:a=nic0,b=leaf0,x=0.001)
# The model map refuses unknown keys, in a scenario and in --model's key=value form.
lockstep_bad_flags(train.model_unknown_key
  "train_model_unknown_key.yaml:6:38: job.model.layerz: unknown model key 'layerz' \\(accepted: preset, name, layers,"
  train ${LOCKSTEP_CLI_DIR}/train_model_unknown_key.yaml)
lockstep_bad_flags(train.model_flag_unknown_key
  "^lockstep: error: --model.layerz: unknown model key 'layerz' \\(accepted: preset, name, layers,"
  train --system hgx-h100 --nodes 1 --model preset=llama3-8b,layerz=2 --tp 8 --global-batch 8)
lockstep_good(train.model_flag_overrides "llama3-8b on 8 GPUs"
  train --system hgx-h100 --nodes 1 --model preset=llama3-8b,layers=2 --tp 8 --global-batch 8
  --engine analytical)
# 16 GPUs x 948,844 s of kernels pass Time's range as a sum although each GPU's share fits: the
# breakdown's mean is taken in 128 bits (it printed "inf ms").
lockstep_good(train.breakdown_mean_past_range "^  compute +948844\\.175 s +100\\.0%"
  train --system hgx-h100 --nodes 2 --model llama3-8b --dp 16 --zero 3 --global-batch 16
  --peak-tflops 0.001)

# --- documentation links (issue 23): every relative link of README.md and docs/ resolves ------
add_test(NAME cli.docs.links_resolve COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-links.sh
                                             ${PROJECT_SOURCE_DIR})
# The check itself can fail: a planted tree with a missing page and a missing heading (both named)
# and a link inside a code span (skipped).
add_test(NAME cli.docs.links_catch_broken
         COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-links.sh ${LOCKSTEP_CLI_DIR}/links_broken)
set_tests_properties(cli.docs.links_catch_broken PROPERTIES
  PASS_REGULAR_EXPRESSION "README.md:1: broken link 'docs/gone.md'.*docs/page.md:2: broken link 'page.md#nowhere'"
  FAIL_REGULAR_EXPRESSION "x\\.md")
set_tests_properties(cli.docs.links_resolve cli.docs.links_catch_broken PROPERTIES LABELS cli)

# --- forced tiers (issue 23). 1,024 H100 on 64-port switches: 32 leaves of 32 hosts fit one pod;
# tiers 3 splits them into 2 pods of 16 leaves, each with 32 spines (one per leaf uplink) of 16
# down and 16 up, and 32 core planes of ceil(2 x 16 / 64) = 1 core, each using 2 x 16 = 32 ports.
lockstep_good(topo.fat_tree_forced_3_tiers "^core +32 +1024 +1024 "
  topo --builder fat_tree --gpus 1024 --tiers 3)
lockstep_good(topo.rail_forced_3_tiers "^core +32 +1024 +1024 "
  topo --builder rail_optimized --gpus 1024 --tiers 3)
# Its cost as money: 1,024 GPUs x $30k + 1,024 NICs x $2k + 128 QM9700 x $30k + transceivers by
# module (QM9700 cages are twin-port): 1,024 NIC-end SR4 x $700; 32 leaves x (16 + 16) twin
# 2xSR4 and 64 spines x 8 down = 1,536 2xSR4 x $1,100; 64 spines x 8 up + 32 cores x 16 = 1,024
# 2xDR4 x $1,500; + 3,072 cords x $50 = 30.72 + 2.048 + 3.84 + 0.7168 + 1.6896 + 1.536 + 0.1536
# M = 40.704 M (per port, 4,096 SR4 + 2,048 DR4: 41.47 M).
lockstep_good(topo.cost_as_money "^approximate cost +\\$40\\.70M$"
  topo --builder fat_tree --gpus 1024 --tiers 3)
# NVSwitch chips (4 per HGX H100 node, 8 nodes: 32) sit on the HGX baseboard the GPU price pays
# for: "included", with the note below the table; in CSV a price_note row.
lockstep_good(topo.nvswitch_included
  "^switch +scale_up +NVSwitch gen3 chip .* 32 +100\\.0 +included +3\\.2 +included$"
  topo --builder rail_optimized --gpus 64)
lockstep_good(topo.nvswitch_included_csv
  "^switch\\.scale_up\\.NVSwitch gen3 chip .*price_note,\"included in NVIDIA H100 SXM5 80GB \\(on the HGX baseboard"
  topo --builder rail_optimized --gpus 64 --format csv)
# auto: 1,024 hosts / 32 per leaf = 32 leaves, one pod of 32: no core, and the design says so.
lockstep_good(topo.fat_tree_auto_says_its_tiers
  "^design: fat_tree: 128 nodes x 8 h100 GPUs, 2 tiers \\(one pod, no core; tiers: 3 adds one\\)"
  topo --builder fat_tree --gpus 1024)
# tiers 2: a leaf-spine of 32 leaves x 32 uplinks over 32 x 32 / 64 = 16 spines, full.
lockstep_good(topo.fat_tree_forced_2_tiers "^spine +16 +1024 +0 "
  topo --builder fat_tree --gpus 1024 --tiers 2)
# Refused with the reason: 64 leaves of 32 hosts are the most one spine tier reaches.
lockstep_good(topo.fat_tree_2_tiers_too_large
  "2 tiers of 64-port switches hold at most 2048 hosts \\(64 leaves x 32 hosts\\); 32768 requested"
  topo --builder fat_tree --gpus 32768 --tiers 2)
lockstep_bad_flags(fat_tree_3_tiers_one_leaf
  "^lockstep: error: --tiers: 3 tiers need at least 2 pods; 8 hosts fit on one 64-port leaf$"
  topo --builder fat_tree --gpus 8 --tiers 3)
lockstep_bad_flags(rail_3_tiers_one_su "^lockstep: error: --tiers: 3 tiers need at least 2 pods of whole SUs"
  topo --builder rail_optimized --nodes 32 --tiers 3)

# Memory in GiB, as train prints it: the catalog's H100 has Bytes::gib(80) = 80.0 GiB (it read
# "85.9 GB" for an 80 GB GPU).
lockstep_bad_flags(train_memory_in_gib
  "^lockstep: error: memory: llama3-405b needs [0-9.]+ GiB per GPU \\(weights [0-9.]+ GiB,.* but the GPU has 80\\.0 GiB: [0-9.]+ GiB over"
  train --system hgx-h100 --nodes 1024 --model llama3-405b --tp 8 --pp 8 --dp 128
  --global-batch 2048)

# Issue 21: train --format json carries the interleaved schedule's N (8, as given; pp 4,
# interleave 2, 16 / 2 = 8 micro-batches per replica) and says DualPipe's figures are simulated
# (its schedule runs as programs; 8 = 2 pp micro-batches, the fewest dualpipe.py takes).
set(LOCKSTEP_PIPE_TRAIN train --system hgx-h100 --nodes 1 --model llama3-8b --pp 4 --dp 2
    --global-batch 16 --seq 2048 --engine analytical --format json)
lockstep_good(train.interleaved_group_json "\"microbatch_group_size_per_vp_stage\": 8,"
  ${LOCKSTEP_PIPE_TRAIN} --interleave 2 --microbatch-group-size-per-vp-stage 8)
lockstep_good(train.dualpipe_simulated_json "\"pipeline_timing\": \"simulated\""
  ${LOCKSTEP_PIPE_TRAIN} --pipeline dualpipe)
# The other job keys under `options` (tp_comm_overlap given, the rest at their defaults).
lockstep_good(train.options_json "\"tp_comm_overlap\": true,"
  ${LOCKSTEP_PIPE_TRAIN} --tp-comm-overlap true)
# DeepSeek-V3's communication SMs: only beside DualPipe's compute, and fewer than the GPU has.
lockstep_bad_flags(train_communication_sms_without_dualpipe
  "^lockstep: error: --communication-sms: needs pipeline: dualpipe"
  ${LOCKSTEP_PIPE_TRAIN} --communication-sms 20)
lockstep_bad_flags(train_communication_sms_all_of_them
  "^lockstep: error: communication_sms: 132 of the h100's 132 SMs leave none for compute$"
  ${LOCKSTEP_PIPE_TRAIN} --pipeline dualpipe --communication-sms 132)

# --- stragglers placed by node, GPU and stage (issue 23). 32 hgx-h100 nodes, TP8 PP4 DP8: node 12
# GPU 3 is rank 12 x 8 + 3 = 99; t = 99 % 8 = 3, d = 99 / 8 % 8 = 4, s = 99 / 64 = 1.
set(LOCKSTEP_SLOW_TRAIN train --system hgx-h100 --fabric ib-ndr --nodes 32 --model llama3-70b --tp 8
    --pp 4 --dp 8 --global-batch 512 --engine analytical)
lockstep_good(train.slow_gpu_by_node
  "^slow GPU +slow-gpu:node=12,gpu=3,x=1.5: rank 99 = node 12 GPU 3, pipeline stage 1 of 4, data-parallel replica 4, TP rank 3$"
  ${LOCKSTEP_SLOW_TRAIN} --fault slow-gpu:node=12,gpu=3,x=1.5)
# The same placement in --format json's slow_gpus (and results.json's training object).
lockstep_good(train.slow_gpu_by_node_json "^ +\"rank\": 99,$"
  ${LOCKSTEP_SLOW_TRAIN} --fault slow-gpu:node=12,gpu=3,x=1.5 --format json)
lockstep_good(train.slow_gpu_by_stage "rank 192 = node 24 GPU 0, pipeline stage 3 of 4"
  ${LOCKSTEP_SLOW_TRAIN} --fault slow-gpu:stage=3,x=1.5)
lockstep_bad_flags(train_slow_gpu_stage_missing
  "^lockstep: error: --fault: 'slow-gpu:stage=4,x=1.5': stage 4 does not exist \\(pp 4: stages 0-3\\)$"
  ${LOCKSTEP_SLOW_TRAIN} --fault slow-gpu:stage=4,x=1.5)
lockstep_bad_flags(train_slow_gpu_node_missing
  "^lockstep: error: --fault: 'slow-gpu:node=32,gpu=1,x=1.5': node 32 does not exist"
  ${LOCKSTEP_SLOW_TRAIN} --fault slow-gpu:node=32,gpu=1,x=1.5)

# --- progress on train and collective (issue 23): a bar with an ETA on a terminal, none with --quiet
add_test(NAME cli.train.progress_on_terminal
         COMMAND sh ${LOCKSTEP_CLI_DIR}/progress_on_terminal.sh $<TARGET_FILE:lockstep> train
                 --system hgx-h100 --nodes 1 --model preset=llama3-8b,layers=2 --tp 8
                 --global-batch 8 --engine analytical --trials 3 --jitter lognormal:0.05)
add_test(NAME cli.collective.progress_on_terminal
         COMMAND sh ${LOCKSTEP_CLI_DIR}/progress_on_terminal.sh $<TARGET_FILE:lockstep> collective
                 --system hgx-h100 --nodes 2 --engine flow --max-bytes 1MiB)
# Inside one simulation: the packet engine reports its ops done (a 16 MiB all-reduce on 2 nodes
# passes 4,096 events, so the first poll draws "0/1" with an ETA); train reports its replicas
# (trial 1 of 2 with 2 replicas: 1.5 of 3 steps = 50%); piped: stderr empty, the same stdout.
add_test(NAME cli.collective.progress_within_run
         COMMAND sh ${LOCKSTEP_CLI_DIR}/progress_within_run.sh $<TARGET_FILE:lockstep>
                 " 0/1  ETA [0-9]" collective --system hgx-h100 --nodes 2 --engine packet
                 --min-bytes 16MiB --max-bytes 16MiB)
add_test(NAME cli.train.progress_within_run
         COMMAND sh ${LOCKSTEP_CLI_DIR}/progress_within_run.sh $<TARGET_FILE:lockstep>
                 " 50%  1/3  ETA" train --system hgx-h100 --nodes 2
                 --model preset=llama3-8b,layers=2 --tp 8 --dp 2 --global-batch 8
                 --expansion reduced --trials 2 --jitter lognormal:0.05)
set_tests_properties(cli.train.progress_on_terminal cli.collective.progress_on_terminal
                     cli.collective.progress_within_run cli.train.progress_within_run
                     PROPERTIES LABELS cli)
include(${LOCKSTEP_CLI_DIR}/nccl_tests.cmake)

# topo --reference: the DGX SuperPOD H100 RA's 3-SU fabric, whose 16 spines come from the
# equal-links rule (12 would hold the ports but not split 32 uplinks evenly); the list; a name
# lockstep does not know is named with the known ones.
lockstep_good(topo.reference_h100_3su "spine switches \\(QM9700\\) +16 +16  same$"
  topo --reference dgx-superpod-h100-3su)
lockstep_good(topo.reference_h100_4su_matches "^matches the document: yes$"
  topo --reference dgx-superpod-h100-4su)
lockstep_good(topo.reference_list "^dgx-superpod-h100-4su +NVIDIA DGX SuperPOD H100, 4 SUs"
  topo --reference list)
# topo --racks (docs/topology.md "Racks and power"): 36 GB200 trays are ceil(36 / 18) = 2 NVL72
# racks at 120-132 kW each; 31 DGX H100 at 4 per rack are 8 racks of 4 x 10.2 = 40.8 kW.
lockstep_good(topo.racks_gb200 "^  compute racks kW +240\\.0-264\\.0$"
  topo --builder preset --system gb200-nvl72 --nodes 36 --racks)
lockstep_good(topo.racks_h100 "^  compute racks +8$"
  topo --builder preset --system hgx-h100 --nodes 31 --racks)
# Network racks (derived): the 1-SU H100 fabric's 12 x 1U QM9700 in one 42U rack; with its 8
# compute racks 9 racks on 18 floor tiles.
lockstep_good(topo.racks_network "^  floor tiles \\(600 mm\\) +18$"
  topo --reference dgx-superpod-h100-1su --racks)
lockstep_bad_flags(racks_not_a_table "^lockstep: error: --racks: prints a table"
  topo --builder preset --system hgx-h100 --racks --format json)
lockstep_bad_flags(reference_unknown
  "^lockstep: error: --reference: unknown reference architecture 'dgx-h100' \\(known: list, dgx-superpod-h100-1su"
  topo --reference dgx-h100)
lockstep_bad_flags(reference_with_builder "^lockstep: error: --reference: give a reference alone"
  topo --reference dgx-superpod-h100-1su --builder fat_tree)
# A spine of another fabric than the leaves is refused, naming the flag.
lockstep_bad_flags(spine_switch_fabric
  "^lockstep: error: --spine-switch: a sn5600 is an ethernet switch and the leaves \\(qm9700\\) are infiniband$"
  topo --builder rail_optimized --sus 1 --spine-switch sn5600)
# --- serve: inference jobs (docs/inference.md) ----------------------------------------------
lockstep_good(serve.llama3_70b
  "TPOT +[0-9.]+ ms"
  serve ${PROJECT_SOURCE_DIR}/scenarios/serve_llama3_70b.yaml)
lockstep_good(serve.preempt "KV cache .* \\(2048 tokens per replica\\), 1 preemptions"
  serve ${LOCKSTEP_CLI_DIR}/serve_preempt.yaml)
lockstep_good(serve.chunked_pp "batching +chunked, .*2 prompts at once"
  serve ${LOCKSTEP_CLI_DIR}/serve_chunked_pp.yaml)
lockstep_bad_flags(serve.bad_pp
  "serve_bad_pp.yaml:8:7: job.pp: 32 layers cannot fill pp=33 stages"
  serve ${LOCKSTEP_CLI_DIR}/serve_bad_pp.yaml)
lockstep_bad_flags(serve.bad_ep
  "serve_bad_ep.yaml:9:7: job.ep: ep=3 does not divide the replica's tp x attention_dp = 2 x 4 = 8 GPUs"
  serve ${LOCKSTEP_CLI_DIR}/serve_bad_ep.yaml)
lockstep_good(serve.dp_attention "attention tp 2 x dp 4, ep 8"
  serve ${LOCKSTEP_CLI_DIR}/serve_dp_attention.yaml)
lockstep_good(serve.dp_shortest_queue "attention tp 2 x dp 4 \\(shortest_queue over the groups\\), ep 8"
  serve ${LOCKSTEP_CLI_DIR}/serve_dp_shortest_queue.yaml)
lockstep_bad_flags(serve.bad_dp_balance
  "serve_bad_dp_balance.yaml:9:15: job.dp_balance: unknown value 'least_tokens' \\(expected one of round_robin, shortest_queue\\)"
  serve ${LOCKSTEP_CLI_DIR}/serve_bad_dp_balance.yaml)
lockstep_good(serve.disaggregated_preempt "\\(2048 tokens per replica\\), 1 preemptions"
  serve ${LOCKSTEP_CLI_DIR}/serve_disaggregated_preempt.yaml)
lockstep_bad_flags(serve.kv_too_large
  "serve_kv_too_large.yaml:8:47: job.batching.kv_cache_tokens: one sequence of up to 4000 \\+ 96 tokens does not fit in the KV cache of 4000 tokens"
  serve ${LOCKSTEP_CLI_DIR}/serve_kv_too_large.yaml)
lockstep_bad_flags(serve.unknown_key
  "serve_unknown_key.yaml:7:66: job.requests.burst: unknown key 'burst'"
  serve ${LOCKSTEP_CLI_DIR}/serve_unknown_key.yaml)
lockstep_bad_flags(serve.training_job
  "job.type: lockstep serve runs `type: inference` jobs"
  serve ${PROJECT_SOURCE_DIR}/scenarios/train_llama3_70b.yaml)
lockstep_bad_flags(train.inference_job
  "serve_llama3_70b.yaml:7:9: job.type: an inference job: run it with lockstep serve or lockstep run"
  train ${PROJECT_SOURCE_DIR}/scenarios/serve_llama3_70b.yaml)
# The estimate comes first: 10^6 requests x 99,999 decode steps at batch 1 (x 50 events each,
# scenario/memory_estimate.cpp) are refused at once; --dry-run prints the estimate.
lockstep_bad_flags(serve.absurd_steps "^lockstep: error: --max-events: the simulation would take about 5e\\+12 events"
  serve ${LOCKSTEP_CLI_DIR}/serve_absurd.yaml)
lockstep_good(serve.dry_run "^memory estimate: .*inference requests .*; budget "
  serve ${PROJECT_SOURCE_DIR}/scenarios/serve_llama3_70b.yaml --dry-run)
lockstep_good(serve.trace
  "trace +.*serve_trace.json"
  serve ${PROJECT_SOURCE_DIR}/scenarios/serve_llama3_70b.yaml --trace
  ${PROJECT_BINARY_DIR}/serve_trace.json --force)

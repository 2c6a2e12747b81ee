// Buffer details of the catalog's switches beyond their size (SwitchSpec::buffer): the cell a
// packet is stored in and the ECN thresholds of the vendor's RoCE configuration. The packet
// engine's `buffers: {model: as_built}` reads them (docs/packet-engine.md "Buffers as built").
//
// Cells: NVIDIA documents the Spectrum buffer in cells in its open SONiC buffer code
// (sonic-swss buffer_headroom_mellanox.lua and the sonic-buildimage Mellanox buffer templates:
// 96 B on Spectrum-1, 144 B on Spectrum-2 and -3, 192 B on Spectrum-4); Broadcom's MMU
// configurations for SONiC use 254 B cells on Tomahawk 3, 4 and 5. Both are read from those
// open configuration files, not from a datasheet: docs/packet-engine.md names them assumptions
// to check against the vendor's documentation. InfiniBand counts its buffers in 64-byte credit
// blocks (IBTA Vol. 1, 7.9.4, the flow control packet's FCCL in 64-byte units).
//
// ECN: NVIDIA's RoCE configuration for Spectrum (Cumulus Linux "RDMA over Converged Ethernet",
// lossless mode): mark from 150 KB, all above 1.5 MB, probability rising to 100%. SONiC's default
// lossless WRED profile on Broadcom parts (AZURE_LOSSLESS): 1 MiB to 2 MiB, 5%. Configuration,
// not hardware: a scenario's `ecn:` overrides them. None for InfiniBand (it marks FECN instead)
// and for Rosetta (not published).
#include <algorithm>
#include <array>

#include "lockstep/topology/catalog.hpp"

namespace lockstep {
namespace {

constexpr std::string_view kSpectrum =
    "cell: SONiC Mellanox buffer code; ECN: NVIDIA Cumulus Linux RoCE lossless defaults";
constexpr std::string_view kTomahawk =
    "cell: SONiC Broadcom MMU configuration; ECN: SONiC AZURE_LOSSLESS WRED profile";
constexpr std::string_view kQuantum = "IBTA Vol. 1 7.9.4: credits in 64-byte blocks";

const std::array<SwitchBufferSpec, 12> kTable = {{
    {"sn3700", Bytes(144), Bytes(150'000), Bytes(1'500'000), 1.0, kSpectrum},
    {"sn4700", Bytes(144), Bytes(150'000), Bytes(1'500'000), 1.0, kSpectrum},
    {"sn5600", Bytes(192), Bytes(150'000), Bytes(1'500'000), 1.0, kSpectrum},
    {"sn5600_400g", Bytes(192), Bytes(150'000), Bytes(1'500'000), 1.0, kSpectrum},
    {"tomahawk3", Bytes(254), Bytes::mib(1), Bytes::mib(2), 0.05, kTomahawk},
    {"tomahawk4", Bytes(254), Bytes::mib(1), Bytes::mib(2), 0.05, kTomahawk},
    {"tomahawk5", Bytes(254), Bytes::mib(1), Bytes::mib(2), 0.05, kTomahawk},
    {"tomahawk5_400g", Bytes(254), Bytes::mib(1), Bytes::mib(2), 0.05, kTomahawk},
    {"qm8700", Bytes(64), Bytes(0), Bytes(0), 0, kQuantum},
    {"qm9700", Bytes(64), Bytes(0), Bytes(0), 0, kQuantum},
    {"q3400", Bytes(64), Bytes(0), Bytes(0), 0, kQuantum},
    {"rosetta", Bytes(0), Bytes(0), Bytes(0), 0, "not published"},
}};

}  // namespace

const SwitchBufferSpec* switch_buffer_spec(std::string_view name) {
  const auto it = std::find_if(kTable.begin(), kTable.end(),
                               [&](const SwitchBufferSpec& s) { return s.switch_name == name; });
  return it == kTable.end() ? nullptr : &*it;
}

}  // namespace lockstep

// Direct (pairwise) algorithms: every rank exchanges with every other rank in one round.
// Peers are visited in pairwise order, node by node as NCCL's p2p schedule does (init.cc, since
// 2.12: rounds by node delta, then by local delta): with g ranks per node and rank r = (node N,
// local i), step s = dn g + dj (dn = 0..nodes-1, dj = 0..g-1, not both 0) sends to (N + dn,
// i + dj) and receives from (N - dn, i - dj), each mod its range, so every step is a permutation
// and no receiver is hit by two senders at once. Without nodes (g = 0 or n) that is r + s and
// r - s mod n. A node made of servers of w ranks (ranks_per_server: an NVL72 rack's trays) walks
// its local deltas as (tray delta, GPU delta): i = (t, u) and dj = dt w + du give (t + dt, u + du).
// (NCCL walks the deltas in a quadratic probing order; every op here is posted at once, so
// within an issue window the order times nothing.) Each transfer is split across the channels.
//   all_reduce     two-shot: direct reduce-scatter, then direct all-gather of the sums
//   all_gather     send own block to every peer; copy own block locally
//   reduce_scatter send block j to rank j; reduce the received blocks into the output
//   broadcast      root sends the buffer to every rank; reduce: every rank sends to the root
//   alltoall(v)    send block j to rank j; copy own block locally
//   sendrecv       send to r+1, receive from r-1
#include <vector>

#include "generated.hpp"

namespace lockstep::collective_detail {
namespace {

class DirectProgramSet final : public GeneratedProgramSet {
 public:
  explicit DirectProgramSet(const CollectiveSpec& s)
      : GeneratedProgramSet(s, std::string(to_string(s.op)) + "/direct") {}
  BufferSizes buffers(Rank r) const override { return standard_buffers(spec(), r); }
  // Rank r + g runs rank r's program with every peer moved by g (the order is by node and local
  // distance); in one node, rank r + w (one server on) or r + 1 (no servers). Every block must
  // have the same size; rooted ops and alltoallv's matrix promise nothing. sendrecv (r to r + 1)
  // translates by one.
  Rank symmetry_period() const override {
    const CollectiveSpec& s = spec();
    if (!equal_blocks()) return 0;
    if (s.op == CollectiveOp::SendRecv) return 1;
    if (!by_distance()) return 0;
    return node_size() < s.ranks ? node_size() : server_size() < node_size() ? server_size() : 1;
  }
  // Rotating every rank by one inside its server (or its node, when it has no servers) maps
  // (N + dn, t + dt, u + du) onto (N + dn, t + dt, u + 1 + du): the same step of the rotated
  // rank. Channels are the same for every peer, so they stay.
  Rank local_symmetry() const override {
    const Rank w = server_size();
    return by_distance() && equal_blocks() && w > 1 && w < spec().ranks ? w : 0;
  }
  bool local_symmetry_moves_channels() const override { return false; }

 protected:
  void generate(Rank r, ProgramBuilder& b) const override {
    const CollectiveSpec& s = spec();
    const Rank n = s.ranks;
    const std::uint64_t e = s.elements();
    const auto block = [&](Rank j) { return Span{block_start(e, n, j), block_size(e, n, j)}; };
    const Rank g = node_size(), nodes = n / g, node = r / g;
    const Rank w = server_size(), servers = g / w, server = r % g / w, gpu = r % w;
    const auto to = [&](Rank step) {
      const Rank dj = step % g;
      return (node + step / g) % nodes * g + (server + dj / w) % servers * w + (gpu + dj % w) % w;
    };
    const auto from = [&](Rank step) {
      const Rank dj = step % g;
      return (node + nodes - step / g) % nodes * g + (server + servers - dj / w) % servers * w +
             (gpu + w - dj % w) % w;
    };
    const std::uint16_t chans = s.channels;
    // Transfers of step st (to(st), from(st)) use `per` channels from st x per on (peers spread
    // over all channels, NCCL's p2p channels per peer); rooted ops and sendrecv use every channel.
    const std::uint16_t per = peer_channels();
    const auto chan = [&](Rank st, std::uint16_t k) {
      return static_cast<std::uint16_t>((std::uint64_t{st} * per + k) % chans);
    };
    // Sends `span` of `buf` to the peer of step st on its channels; returns the op indices.
    const auto send_step = [&](Rank st, Buffer buf, Span span, std::vector<OpIndex>* out,
                               OpIndex dep = kNoOp) {
      for (std::uint16_t k = 0; k < per; ++k) {
        const OpIndex i = b.send(to(st), buf, span.part(per, k), chan(st, k), {dep});
        if (out) out->push_back(i);
      }
    };
    const auto recv_step = [&](Rank st, Buffer buf, Span span, RecvMode m, OpIndex dep,
                               std::vector<OpIndex>* out = nullptr) {
      for (std::uint16_t k = 0; k < per; ++k) {
        const OpIndex i = b.recv(from(st), buf, span.part(per, k), m, chan(st, k), {dep});
        if (out) out->push_back(i);
      }
    };
    // Rooted ops and sendrecv: `span` to `peer` on every channel.
    const auto send_all = [&](Rank peer, Buffer buf, Span span) {
      for (std::uint16_t c = 0; c < chans; ++c) b.send(peer, buf, span.part(chans, c), c, {});
    };
    const auto recv_all = [&](Rank peer, Buffer buf, Span span, RecvMode m) {
      for (std::uint16_t c = 0; c < chans; ++c) b.recv(peer, buf, span.part(chans, c), m, c, {});
    };
    switch (s.op) {
      case CollectiveOp::AllReduce: {
        // Two-shot, as the NCCL model prices it: reduce-scatter (block j to rank j, every rank
        // adds its peers' copies of its own block) then all-gather of the reduced blocks. Nothing
        // in the first round waits, so it cannot deadlock when sends block until matched.
        const Span own = block(r);
        std::vector<OpIndex> reduced;
        std::vector<std::vector<OpIndex>> read(n);  // round-1 sends, by destination and channel
        for (Rank st = 1; st < n; ++st) send_step(st, Buffer::Input, block(to(st)), &read[to(st)]);
        for (Rank st = 1; st < n; ++st)
          recv_step(st, Buffer::Input, own, RecvMode::Reduce, kNoOp, &reduced);
        const OpIndex done = b.join(reduced);
        for (Rank st = 1; st < n; ++st) send_step(st, Buffer::Input, own, nullptr, done);
        // A received block overwrites the data this rank sent its owner in round 1.
        for (Rank st = 1; st < n; ++st)
          for (std::uint16_t k = 0; k < per; ++k)
            b.recv(from(st), Buffer::Input, block(from(st)).part(per, k), RecvMode::Copy,
                   chan(st, k), {read[from(st)][k]});
        break;
      }
      case CollectiveOp::AllGather:
        b.add(make_copy(b.range(Buffer::Input, {0, block(r).count}),
                        b.range(Buffer::Output, block(r))));
        for (Rank st = 1; st < n; ++st) send_step(st, Buffer::Input, {0, block(r).count}, nullptr);
        for (Rank st = 1; st < n; ++st)
          recv_step(st, Buffer::Output, block(from(st)), RecvMode::Copy, kNoOp);
        break;
      case CollectiveOp::ReduceScatter: {
        const OpIndex own = b.add(make_copy(b.range(Buffer::Input, block(r)),
                                            b.range(Buffer::Output, {0, block(r).count})));
        for (Rank st = 1; st < n; ++st) send_step(st, Buffer::Input, block(to(st)), nullptr);
        for (Rank st = 1; st < n; ++st)
          recv_step(st, Buffer::Output, {0, block(r).count}, RecvMode::Reduce, own);
        break;
      }
      case CollectiveOp::Broadcast:
        if (r == s.root) {
          for (Rank st = 1; st < n; ++st) send_all(to(st), Buffer::Input, {0, e});
        } else {
          recv_all(s.root, Buffer::Input, {0, e}, RecvMode::Copy);
        }
        break;
      case CollectiveOp::Reduce:
        if (r == s.root) {
          for (Rank st = 1; st < n; ++st)
            recv_all(from(st), Buffer::Input, {0, e}, RecvMode::Reduce);
        } else {
          send_all(s.root, Buffer::Input, {0, e});
        }
        break;
      case CollectiveOp::AllToAll: {
        const std::uint64_t mine = block(r).count;
        b.add(
            make_copy(b.range(Buffer::Input, block(r)), b.range(Buffer::Output, {r * mine, mine})));
        for (Rank st = 1; st < n; ++st) send_step(st, Buffer::Input, block(to(st)), nullptr);
        for (Rank st = 1; st < n; ++st)
          recv_step(st, Buffer::Output, {from(st) * mine, mine}, RecvMode::Copy, kNoOp);
        break;
      }
      case CollectiveOp::AllToAllV:
        alltoallv(r, b);
        break;
      case CollectiveOp::SendRecv:
        if (n == 1) {
          b.add(make_copy(b.range(Buffer::Input, {0, e}), b.range(Buffer::Output, {0, e})));
        } else {
          send_all((r + 1) % n, Buffer::Input, {0, e});
          recv_all((r + n - 1) % n, Buffer::Output, {0, e}, RecvMode::Copy);
        }
        break;
      case CollectiveOp::Barrier:
        break;
    }
  }

 private:
  // Ops whose every rank visits its peers by distance (the others are rooted, a matrix or r + 1).
  bool by_distance() const {
    const CollectiveOp op = spec().op;
    return op == CollectiveOp::AllReduce || op == CollectiveOp::AllGather ||
           op == CollectiveOp::ReduceScatter || op == CollectiveOp::AllToAll;
  }
  // Channels per peer for the ops that visit peers by distance: channels_per_peer when it is a
  // power of two dividing the channels (validate() checks it), else every channel.
  std::uint16_t peer_channels() const {
    const std::uint16_t c = spec().channels, p = spec().channels_per_peer;
    return by_distance() && p > 0 && p < c ? p : c;
  }
  bool equal_blocks() const { return spec().ranks > 1 && spec().elements() % spec().ranks == 0; }
  // Ranks per node in the visiting order: ranks_per_node when it splits the ranks into several
  // nodes (validate() has checked that it divides them), else all of them (the order r + s).
  Rank node_size() const {
    const Rank n = spec().ranks, g = spec().ranks_per_node;
    return g > 1 && g < n && n % g == 0 ? g : n;
  }
  // Ranks per server inside a node: ranks_per_server when nodes are given and it splits them
  // (validate() has checked that it divides them), else the node's.
  Rank server_size() const {
    const Rank g = node_size(), w = spec().ranks_per_server;
    return spec().ranks_per_node != 0 && w > 1 && w < g ? w : g;
  }

  // Input of rank r: its blocks for ranks 0..n-1 in order; output: blocks from 0..n-1 in order.
  void alltoallv(Rank r, ProgramBuilder& b) const {
    const CollectiveSpec& s = spec();
    const Rank n = s.ranks;
    const std::uint64_t es = elem_size();
    std::vector<std::uint64_t> in_off(n + 1, 0), out_off(n + 1, 0);
    for (Rank j = 0; j < n; ++j) {
      in_off[j + 1] = in_off[j] + s.alltoallv[r][j] / es;
      out_off[j + 1] = out_off[j] + s.alltoallv[j][r] / es;
    }
    const auto in = [&](Rank j) { return Span{in_off[j], in_off[j + 1] - in_off[j]}; };
    const auto out = [&](Rank j) { return Span{out_off[j], out_off[j + 1] - out_off[j]}; };
    b.add(make_copy(b.range(Buffer::Input, in(r)), b.range(Buffer::Output, out(r))));
    for (Rank st = 1; st < n; ++st) {
      const Rank peer = (r + st) % n;
      for (std::uint16_t c = 0; c < s.channels; ++c)
        b.send(peer, Buffer::Input, in(peer).part(s.channels, c), c, {});
    }
    for (Rank st = 1; st < n; ++st) {
      const Rank peer = (r + n - st) % n;
      for (std::uint16_t c = 0; c < s.channels; ++c)
        b.recv(peer, Buffer::Output, out(peer).part(s.channels, c), RecvMode::Copy, c, {});
    }
  }
};

}  // namespace

std::unique_ptr<ProgramSet> make_direct(const CollectiveSpec& spec) {
  return std::make_unique<DirectProgramSet>(spec);
}

}  // namespace lockstep::collective_detail

#include "connections.hpp"

#include <fmt/format.h>

#include "lockstep/core/error.hpp"
#include "transfers.hpp"

namespace lockstep::flow_detail {

std::uint32_t Connections::connection(Rank src_class, Rank to, std::uint16_t channel) {
  const std::uint64_t a = static_cast<std::uint64_t>(src_class) << 32 | to;
  const std::uint64_t b = channel;
  std::uint32_t id = index_.find(a, b);
  if (id == FlatIndex::kMissing) {
    id = static_cast<std::uint32_t>(connections_.size());
    connections_.emplace_back();
    index_.insert(a, b, id);
  }
  return id;
}

void Connections::post(Rank r, OpIndex i, const IssuedOp& op) {
  if (op.kind == OpKind::Send) {
    const std::uint32_t id = connection(r, op.peer, op.channel);
    Connection& c = connections_[id];
    if (c.recv_head < c.recvs.size()) {
      const PostedOp recv = c.recvs[c.recv_head++];
      if (c.recv_head == c.recvs.size()) c.recvs.clear(), c.recv_head = 0;
      match({r, i, op.src_bytes}, recv, op.peer, op.channel, id);
    } else {
      c.sends.push_back({r, i, op.src_bytes});
    }
  } else {
    const ClassMap::Where from = map_.where(op.peer);
    const ClassMap::Element back = map_.inverse(from.e);
    const Rank to = map_.apply(back, map_.real(r));
    const std::uint16_t channel = map_.apply_channel(back, op.channel);
    const std::uint32_t id = connection(from.cls, to, channel);
    Connection& c = connections_[id];
    if (c.send_head < c.sends.size()) {
      const PostedOp send = c.sends[c.send_head++];
      if (c.send_head == c.sends.size()) c.sends.clear(), c.send_head = 0;
      match(send, {r, i, op.dst_bytes()}, to, channel, id);
    } else {
      c.recvs.push_back({r, i, op.dst_bytes()});
    }
  }
}

void Connections::match(const PostedOp& send, const PostedOp& recv, Rank to, std::uint16_t channel,
                        std::uint32_t id) {
  if (send.bytes != recv.bytes) {
    throw InputError(
        "programs",
        fmt::format("rank {} op {} sends {} bytes to rank {} but the matching recv "
                    "(op {}) expects {} bytes",
                    map_.real(send.rank), send.op, send.bytes, to, recv.op, recv.bytes));
  }
  const std::uint32_t t = transfers_.point_to_point(send, recv, to, channel, id);
  if (t == Transfers::kNoTransfer) return;  // Asymmetry::Paths: the attempt is over
  Connection& c = connections_[id];
  if (c.busy) {
    c.backlog.push_back(t);
  } else {
    c.busy = true;
    transfers_.launch(t);
  }
}

void Connections::stream_done(std::uint32_t id) {
  Connection& c = connections_[id];
  if (c.backlog_head < c.backlog.size()) {
    const std::uint32_t next = c.backlog[c.backlog_head++];
    if (c.backlog_head == c.backlog.size()) c.backlog.clear(), c.backlog_head = 0;
    transfers_.launch(next);
  } else {
    c.busy = false;
  }
}

}  // namespace lockstep::flow_detail

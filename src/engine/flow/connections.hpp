#pragma once
// Connections of a flow-engine run (internal; docs/flow-engine.md "Executing programs").
//
// A connection is (sending class, receiver as the sender's representative sees it, channel).
// Sends and recvs posted on it match in FIFO order, as program.hpp defines; a matched pair
// becomes a transfer (Transfers). One connection streams one transfer at a time, as one NCCL
// channel is a FIFO: the next matched transfer starts when the previous one's last byte has left
// (stream_done).
//
// With classes, a recv from rank p = e(x) (x the representative of p's class, e a symmetry) is
// member e of the transfer that x sends to e^-1(this representative) on channel e^-1(channel), so
// it is matched on x's connection in x's frame.
//
// Owns the connections (unmatched sends and recvs, the backlog of matched transfers, busy);
// relies on the class map and Transfers.
#include <cstdint>
#include <vector>

#include "class_map.hpp"
#include "flat_index.hpp"
#include "ranks.hpp"

namespace lockstep::flow_detail {

class Transfers;

struct Connection {
  std::vector<PostedOp> sends, recvs;  // unmatched, from *_head on
  std::size_t send_head = 0, recv_head = 0;
  std::vector<std::uint32_t> backlog;  // matched transfers waiting to stream, from backlog_head on
  std::size_t backlog_head = 0;
  bool busy = false;  // a transfer is streaming
};

class Connections {
 public:
  Connections(const ClassMap& map, Transfers& transfers) : map_(map), transfers_(transfers) {}

  // Posts rank r's send or recv op i.
  void post(Rank r, OpIndex i, const IssuedOp& op);
  // Connection `id`'s streaming transfer has sent its last byte: the next one may stream.
  void stream_done(std::uint32_t id);

 private:
  friend class SteadyState;  // writes the connections and moves their op indices on
  // The connection from class src_class's representative to rank `to` (as it sees them).
  std::uint32_t connection(Rank src_class, Rank to, std::uint16_t channel);
  // `to` and `channel` are the receiver's rank and the channel as the sender's representative
  // sees them.
  void match(const PostedOp& send, const PostedOp& recv, Rank to, std::uint16_t channel,
             std::uint32_t id);

  const ClassMap map_;  // a copy: read at every recv
  Transfers& transfers_;
  FlatIndex index_;  // (src class, to, channel) -> connection
  std::vector<Connection> connections_;
};

}  // namespace lockstep::flow_detail

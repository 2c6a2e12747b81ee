// The functional executor (see executor.hpp for the semantics). All ranks' ops are flattened
// into one array with a CSR list of dependents; a ready queue drives execution, messages wait in
// per-(src, dst, channel) slots indexed by their FIFO sequence number, and NetReduce instances
// collect members until the group is complete.
#include "lockstep/engine/functional/executor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <unordered_map>

#include "lockstep/core/error.hpp"
#include "net_reduce.hpp"
#include "reduce.hpp"

namespace lockstep {
namespace {

constexpr std::uint32_t kNone = 0xffffffffu;
enum State : std::uint8_t { kWaitingDeps, kBlocked, kDone };

struct Message {
  bool present = false, consumed = false;
  std::uint64_t bytes = 0;
  std::uint32_t send = kNone;  // global op id of the send
  std::uint32_t depth = 0;
  std::vector<std::byte> data;
  std::vector<std::uint64_t> heard;
};

struct PairQueue {
  std::vector<Message> messages;    // by FIFO sequence
  std::vector<std::uint32_t> wait;  // recv op blocked on sequence k, or kNone
};

struct GroupInstance {
  std::vector<std::uint32_t> members;  // global op ids that are ready
};

std::string describe(const Op& op) {
  switch (op.kind) {
    case OpKind::Send:
      return fmt::format("send {} B to rank {} on channel {}", op.src.bytes, op.peer, op.channel);
    case OpKind::Recv:
      return fmt::format("recv {} B from rank {} on channel {}", op.dst.bytes, op.peer, op.channel);
    case OpKind::Copy:
      return fmt::format("copy {} B", op.src.bytes);
    case OpKind::Reduce:
      return fmt::format("reduce {} B", op.src.bytes);
    case OpKind::Compute:
      return "compute";
    case OpKind::NetReduce:
      return fmt::format("net_reduce {} B in group {}", op.src.bytes, op.peer);
  }
  return "?";
}

const char* buffer_name(Buffer b) {
  return b == Buffer::Input ? "input" : b == Buffer::Output ? "output" : "scratch";
}

class Executor {
 public:
  Executor(const ProgramSet& p, std::vector<RankBuffers>& buffers, const FunctionalOptions& o)
      : p_(p), bufs_(buffers), opt_(o), n_(p.num_ranks()), es_(size_of(p.data_type())) {}

  FunctionalResult run() {
    load();
    for (std::uint32_t g = 0; g < ops_.size(); ++g)
      if (pending_[g] == 0) ready_.push_back(g);
    while (!ready_.empty()) {
      std::uint32_t g;
      if (opt_.schedule == Schedule::Forward) {
        g = ready_.front();
        ready_.pop_front();
      } else {
        g = ready_.back();
        ready_.pop_back();
      }
      start(g);
    }
    if (done_ != ops_.size()) report_deadlock();
    check_unreceived();
    return finish();
  }

 private:
  // --- loading -------------------------------------------------------------------------------
  void load() {
    first_.assign(n_ + 1, 0);
    std::uint64_t total = 0;
    for (Rank r = 0; r < n_; ++r) {
      first_[r] = static_cast<std::uint32_t>(total);
      total += p_.num_ops(r);
      if (total > opt_.max_ops)
        throw InputError("ranks", fmt::format("more than {} ops: too large to execute "
                                              "functionally; use fewer ranks or bytes",
                                              opt_.max_ops));
    }
    first_[n_] = static_cast<std::uint32_t>(total);
    ops_.resize(total);
    rank_of_.resize(total);
    pending_.assign(total, 0);
    state_.assign(total, kWaitingDeps);
    depth_.assign(total, 0);
    seq_.assign(total, 0);
    if (opt_.track_causality) {
      if (n_ > 4096) throw InputError("ranks", "causality tracking needs at most 4096 ranks");
      words_ = (n_ + 63) / 64;
      heard_.assign(total * words_, 0);
    }
    sizes_.resize(n_);
    std::vector<std::uint32_t> count(total + 1, 0);
    // FIFO sequence numbers per (src, dst, channel) for sends [0] and recvs [1], and per
    // (group, rank) for net_reduce.
    std::unordered_map<std::uint64_t, std::uint32_t> counters[2], group_counters;
    for (Rank r = 0; r < n_; ++r) {
      sizes_[r] = p_.buffers(r);
      for (OpIndex i = 0; i < p_.num_ops(r); ++i) {
        const std::uint32_t g = first_[r] + i;
        const Op op = p_.op(r, i);
        ops_[g] = op;
        rank_of_[g] = r;
        pending_[g] = op.num_deps;
        for (OpIndex d : op.dependencies()) {
          if (d >= i)
            throw InputError("programs", fmt::format("rank {} op {} depends on op {}, which is "
                                                     "not an earlier op",
                                                     r, i, d));
          ++count[first_[r] + d];
        }
        check_ranges(r, i, op);
        if (op.kind == OpKind::Send || op.kind == OpKind::Recv) {
          if (op.peer >= n_)
            throw InputError("programs", fmt::format("rank {} op {} ({}): no rank {}", r, i,
                                                     describe(op), op.peer));
          const Rank src = op.kind == OpKind::Send ? r : op.peer;
          const Rank dst = op.kind == OpKind::Send ? op.peer : r;
          seq_[g] = counters[op.kind == OpKind::Recv][pair_key(src, dst, op.channel)]++;
        } else if (op.kind == OpKind::NetReduce) {
          if (op.peer >= p_.num_groups())
            throw InputError("programs", fmt::format("rank {} op {}: no group {}", r, i, op.peer));
          const std::span<const Rank> members = p_.group(op.peer);
          if (std::find(members.begin(), members.end(), r) == members.end())
            throw InputError("programs", fmt::format("rank {} op {}: rank is not a member of "
                                                     "net_reduce group {}",
                                                     r, i, op.peer));
          seq_[g] = group_counters[(std::uint64_t{op.peer} << 32) | r]++;
        }
      }
    }
    // CSR of dependents.
    dep_first_.assign(total + 1, 0);
    for (std::uint64_t g = 0; g < total; ++g) dep_first_[g + 1] = dep_first_[g] + count[g];
    dep_list_.resize(dep_first_[total]);
    std::vector<std::uint32_t> fill(dep_first_.begin(), dep_first_.end() - 1);
    for (std::uint32_t g = 0; g < total; ++g) {
      const std::uint32_t base = first_[rank_of_[g]];
      for (OpIndex d : ops_[g].dependencies()) dep_list_[fill[base + d]++] = g;
    }
  }

  static std::uint64_t pair_key(Rank src, Rank dst, std::uint16_t ch) {
    return (std::uint64_t{src} << 40) | (std::uint64_t{dst} << 16) | ch;
  }

  std::uint64_t buffer_size(Rank r, Buffer b) const {
    const BufferSizes& s = sizes_[r];
    if (b == Buffer::Input) return s.input;
    if (b == Buffer::Output) return s.in_place ? s.input : s.output;
    return s.scratch;
  }

  void check_range(Rank r, OpIndex i, const Op& op, const BufferRange& br, const char* what) {
    const std::uint64_t size = buffer_size(r, br.buffer);
    if (br.offset > size || br.bytes > size - br.offset)
      throw InputError("programs", fmt::format("rank {} op {} ({}): {} range [{}, {}) is outside "
                                               "the {} buffer of {} B",
                                               r, i, describe(op), what, br.offset,
                                               br.offset + br.bytes, buffer_name(br.buffer), size));
  }

  void check_ranges(Rank r, OpIndex i, const Op& op) {
    const bool has_src = op.kind == OpKind::Send || op.kind == OpKind::Copy ||
                         op.kind == OpKind::Reduce || op.kind == OpKind::NetReduce;
    const bool has_dst = op.kind == OpKind::Recv || op.kind == OpKind::Copy ||
                         op.kind == OpKind::Reduce || op.kind == OpKind::NetReduce;
    if (has_src) check_range(r, i, op, op.src, "source");
    if (has_dst) check_range(r, i, op, op.dst, "destination");
    // A NetReduce may take a window of the sum (reduce-scatter) or gather disjoint pieces
    // (multicast all-gather): its sizes are checked per group in net_reduce_windowed()
    // (net_reduce.hpp).
    if (has_src && has_dst && op.src.bytes != op.dst.bytes && op.kind != OpKind::NetReduce)
      throw InputError("programs", fmt::format("rank {} op {} ({}): source has {} B but "
                                               "destination {} B",
                                               r, i, describe(op), op.src.bytes, op.dst.bytes));
    const bool reduces = op.kind == OpKind::Reduce || op.kind == OpKind::NetReduce ||
                         (op.kind == OpKind::Recv && op.mode == RecvMode::Reduce);
    if (reduces && op.bytes() % es_ != 0)
      throw InputError("programs", fmt::format("rank {} op {} ({}): not a whole number of {} "
                                               "elements",
                                               r, i, describe(op), to_string(p_.data_type())));
  }

  std::byte* ptr(Rank r, const BufferRange& br) {
    RankBuffers& b = bufs_[r];
    std::vector<std::byte>& v = br.buffer == Buffer::Input    ? b.input
                                : br.buffer == Buffer::Output ? b.out()
                                                              : b.scratch;
    return v.data() + br.offset;
  }

  // --- execution -----------------------------------------------------------------------------
  std::uint32_t dep_depth(std::uint32_t g) const {
    std::uint32_t d = 0;
    const std::uint32_t base = first_[rank_of_[g]];
    for (OpIndex i : ops_[g].dependencies()) d = std::max(d, depth_[base + i]);
    return d;
  }

  std::uint64_t* heard(std::uint32_t g) { return heard_.data() + std::uint64_t{g} * words_; }

  void gather_heard(std::uint32_t g) {
    if (!words_) return;
    const Rank r = rank_of_[g];
    std::uint64_t* h = heard(g);
    h[r / 64] |= std::uint64_t{1} << (r % 64);
    for (OpIndex i : ops_[g].dependencies()) {
      const std::uint64_t* d = heard(first_[r] + i);
      for (std::uint32_t w = 0; w < words_; ++w) h[w] |= d[w];
    }
  }

  void start(std::uint32_t g) {
    const Op& op = ops_[g];
    const Rank r = rank_of_[g];
    depth_[g] = dep_depth(g);
    gather_heard(g);
    switch (op.kind) {
      case OpKind::Send: {
        PairQueue& q = pairs_[pair_key(r, op.peer, op.channel)];
        Message& m = slot(q, seq_[g]);
        m.present = true;
        m.bytes = op.src.bytes;
        m.send = g;
        m.depth = depth_[g];
        if (opt_.move_data) {
          m.data = take_buffer();
          m.data.assign(ptr(r, op.src), ptr(r, op.src) + op.src.bytes);
        }
        if (words_) m.heard.assign(heard(g), heard(g) + words_);
        complete(g);
        if (seq_[g] < q.wait.size() && q.wait[seq_[g]] != kNone) deliver(q.wait[seq_[g]], m);
        return;
      }
      case OpKind::Recv: {
        PairQueue& q = pairs_[pair_key(op.peer, r, op.channel)];
        Message& m = slot(q, seq_[g]);
        if (m.present) {
          deliver(g, m);
        } else {
          state_[g] = kBlocked;
          q.wait[seq_[g]] = g;
        }
        return;
      }
      case OpKind::Copy:
        if (opt_.move_data && op.src.bytes)
          std::memmove(ptr(r, op.dst), ptr(r, op.src), op.src.bytes);
        complete(g);
        return;
      case OpKind::Reduce:
        if (opt_.move_data)
          functional_detail::reduce_into(ptr(r, op.dst), ptr(r, op.src), op.src.bytes,
                                         p_.data_type());
        complete(g);
        return;
      case OpKind::Compute:
        complete(g);
        return;
      case OpKind::NetReduce:
        net_reduce(g);
        return;
    }
  }

  // Message payloads are recycled: fresh large vectors would cost a page fault per 4 KiB.
  std::vector<std::byte> take_buffer() {
    if (pool_.empty()) return {};
    std::vector<std::byte> v = std::move(pool_.back());
    pool_.pop_back();
    return v;
  }

  Message& slot(PairQueue& q, std::uint32_t seq) {
    if (q.messages.size() <= seq) {
      q.messages.resize(seq + 1);
      q.wait.resize(seq + 1, kNone);
    }
    return q.messages[seq];
  }

  void deliver(std::uint32_t g, Message& m) {
    const Op& op = ops_[g];
    const Rank r = rank_of_[g];
    if (m.bytes != op.dst.bytes) {
      const std::uint32_t s = m.send;
      throw InputError("programs",
                       fmt::format("size mismatch: rank {} op {} sends {} B to rank {} on channel "
                                   "{} but rank {} op {} receives {} B",
                                   rank_of_[s], s - first_[rank_of_[s]], m.bytes, r, op.channel, r,
                                   g - first_[r], op.dst.bytes));
    }
    if (opt_.move_data) {
      if (op.mode == RecvMode::Copy) {
        if (m.bytes) std::memcpy(ptr(r, op.dst), m.data.data(), m.bytes);
      } else {
        functional_detail::reduce_into(ptr(r, op.dst), m.data.data(), m.bytes, p_.data_type());
      }
    }
    depth_[g] = std::max(depth_[g], m.depth + 1);
    if (words_)
      for (std::uint32_t w = 0; w < words_; ++w) heard(g)[w] |= m.heard[w];
    m.consumed = true;
    if (m.data.capacity()) pool_.push_back(std::move(m.data));
    m.data = {};
    m.heard = {};
    complete(g);
  }

  void net_reduce(std::uint32_t g) {
    const Op& op = ops_[g];
    const std::span<const Rank> members = p_.group(op.peer);
    const std::uint64_t key = (std::uint64_t{op.peer} << 32) | seq_[g];
    GroupInstance& inst = groups_[key];
    inst.members.push_back(g);
    state_[g] = kBlocked;
    if (inst.members.size() < members.size()) return;
    std::vector<std::uint32_t> ids = std::move(inst.members);
    groups_.erase(key);
    std::uint32_t depth = 0;
    std::vector<std::uint64_t> all(words_, 0);
    const bool windowed = std::any_of(ids.begin(), ids.end(), [&](std::uint32_t m) {
      return ops_[m].src.bytes != ops_[m].dst.bytes;
    });
    for (std::uint32_t m : ids) {
      if (!windowed && ops_[m].src.bytes != op.src.bytes)
        throw InputError("programs", fmt::format("net_reduce group {}: rank {} contributes {} B "
                                                 "but rank {} contributes {} B",
                                                 op.peer, rank_of_[m], ops_[m].src.bytes,
                                                 rank_of_[g], op.src.bytes));
      depth = std::max(depth, depth_[m]);
      for (std::uint32_t w = 0; w < words_; ++w) all[w] |= heard(m)[w];
    }
    if (windowed) {
      std::vector<functional_detail::NetReduceMember> window;
      window.reserve(ids.size());
      for (std::uint32_t m : ids) window.push_back(window_member(m));
      functional_detail::net_reduce_windowed(op.peer, window, p_.data_type());
    } else if (opt_.move_data) {
      std::vector<std::byte> sum(ptr(rank_of_[ids[0]], ops_[ids[0]].src),
                                 ptr(rank_of_[ids[0]], ops_[ids[0]].src) + op.src.bytes);
      for (std::size_t k = 1; k < ids.size(); ++k)
        functional_detail::reduce_into(sum.data(), ptr(rank_of_[ids[k]], ops_[ids[k]].src),
                                       op.src.bytes, p_.data_type());
      for (std::uint32_t m : ids)
        if (op.src.bytes) std::memcpy(ptr(rank_of_[m], ops_[m].dst), sum.data(), op.src.bytes);
    }
    for (std::uint32_t m : ids) {
      depth_[m] = depth + 1;
      if (words_) std::copy(all.begin(), all.end(), heard(m));
      complete(m);
    }
  }

  // Member g of a windowed NetReduce; its data pointers only where data moves, since the
  // buffers exist only then.
  functional_detail::NetReduceMember window_member(std::uint32_t g) {
    const Op& o = ops_[g];
    const Rank r = rank_of_[g];
    functional_detail::NetReduceMember member{r, g - first_[r], o.src, o.dst};
    if (opt_.move_data) member.src_data = ptr(r, o.src);
    if (opt_.move_data && o.dst.bytes) member.dst_data = ptr(r, o.dst);
    return member;
  }

  void complete(std::uint32_t g) {
    state_[g] = kDone;
    ++done_;
    for (std::uint32_t k = dep_first_[g]; k < dep_first_[g + 1]; ++k) {
      const std::uint32_t d = dep_list_[k];
      if (--pending_[d] == 0) ready_.push_back(d);
    }
  }

  // --- errors --------------------------------------------------------------------------------
  void report_deadlock() {
    // For each stuck rank, name the first op that waits on something outside the rank (a recv
    // or a net_reduce that is ready but unmatched); fall back to its first unfinished op.
    std::vector<std::string> parts;
    Rank stuck = 0;
    for (Rank r = 0; r < n_; ++r) {
      std::uint32_t first_open = kNone, blocked = kNone;
      for (std::uint32_t g = first_[r]; g < first_[r + 1]; ++g) {
        if (state_[g] == kDone) continue;
        if (first_open == kNone) first_open = g;
        if (state_[g] == kBlocked) {
          blocked = g;
          break;
        }
      }
      if (first_open == kNone) continue;
      ++stuck;
      if (parts.size() >= 6) continue;
      const std::uint32_t g = blocked != kNone ? blocked : first_open;
      const Op& op = ops_[g];
      std::string why =
          blocked != kNone ? (op.kind == OpKind::Recv ? ", no matching send" : ", group incomplete")
                           : ", waiting on its dependencies";
      parts.push_back(fmt::format("rank {} op {} ({}{})", r, g - first_[r], describe(op), why));
    }
    throw InputError("programs",
                     fmt::format("deadlock: {} of {} ranks cannot progress: {}{}", stuck, n_,
                                 fmt::join(parts, "; "), stuck > parts.size() ? "; ..." : ""));
  }

  void check_unreceived() {
    for (const auto& [key, q] : pairs_) {
      for (std::size_t s = 0; s < q.messages.size(); ++s) {
        const Message& m = q.messages[s];
        if (m.present && !m.consumed) {
          const Rank src = rank_of_[m.send];
          throw InputError("programs",
                           fmt::format("rank {} op {} ({}) is never received (message #{} on "
                                       "that pair and channel)",
                                       src, m.send - first_[src], describe(ops_[m.send]), s));
        }
      }
    }
  }

  FunctionalResult finish() {
    FunctionalResult res;
    res.ranks.resize(n_);
    res.ops = ops_.size();
    for (Rank r = 0; r < n_; ++r) {
      res.ranks[r] = summarize_rank(p_, r);
      std::uint32_t steps = 0;
      for (std::uint32_t g = first_[r]; g < first_[r + 1]; ++g) steps = std::max(steps, depth_[g]);
      res.ranks[r].steps = steps;
      res.steps = std::max(res.steps, steps);
      if (words_) {
        std::vector<std::uint64_t> h(words_, 0);
        h[r / 64] |= std::uint64_t{1} << (r % 64);
        for (std::uint32_t g = first_[r]; g < first_[r + 1]; ++g)
          for (std::uint32_t w = 0; w < words_; ++w) h[w] |= heard(g)[w];
        res.heard.push_back(std::move(h));
      }
    }
    return res;
  }

  const ProgramSet& p_;
  std::vector<RankBuffers>& bufs_;
  FunctionalOptions opt_;
  Rank n_;
  std::size_t es_;
  std::vector<std::uint32_t> first_, rank_of_, depth_, seq_, dep_first_, dep_list_;
  std::vector<Op> ops_;
  std::vector<std::uint8_t> pending_, state_;
  std::vector<BufferSizes> sizes_;
  std::uint32_t words_ = 0;
  std::vector<std::uint64_t> heard_;
  std::deque<std::uint32_t> ready_;
  std::vector<std::vector<std::byte>> pool_;
  std::unordered_map<std::uint64_t, PairQueue> pairs_;
  std::unordered_map<std::uint64_t, GroupInstance> groups_;
  std::uint64_t done_ = 0;
};

}  // namespace

FunctionalResult execute(const ProgramSet& programs, std::vector<RankBuffers>& buffers,
                         const FunctionalOptions& options) {
  if (options.move_data && buffers.size() != programs.num_ranks())
    throw std::invalid_argument("execute: buffers do not match the program set");
  Executor ex(programs, buffers, options);
  return ex.run();
}

}  // namespace lockstep

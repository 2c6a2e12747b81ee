// Engine runs of step programs and collectives, and what each rank did with its time.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "lockstep/core/rng.hpp"
#include "lockstep/topology/device_names.hpp"
#include "training_detail.hpp"

namespace lockstep::train_detail {

RunResult Runner::run(const ProgramSet& programs, const std::vector<std::uint32_t>& global_ranks,
                      bool record_ops, bool record_links, const EngineOptions* options) {
  std::vector<DeviceId> placement;
  placement.reserve(global_ranks.size());
  for (std::uint32_t g : global_ranks) placement.push_back(topo_.gpus()[g]);
  EngineInput in;
  in.topology = &topo_;
  in.programs = &programs;
  in.placement = placement;
  in.router = &router_;
  if (options) in.options = *options;
  in.options.record_ops = record_ops;
  in.options.record_link_series = record_links;
  return engine_.run(in);
}

Time Runner::collective(CollectiveOp op, Bytes bytes,
                        const std::vector<std::vector<std::uint32_t>>& groups,
                        std::uint32_t gpus_per_node) {
  // With translation symmetry, groups that are the same pattern shifted by whole nodes (the DP
  // groups of different pipeline stages) take the same time: key them by their shape.
  const std::uint32_t origin =
      translation_symmetric_ && gpus_per_node ? groups[0][0] / gpus_per_node * gpus_per_node : 0;
  std::uint64_t signature = groups.size();
  for (const auto& g : groups)
    for (std::uint32_t r : g) signature = mix64(signature ^ (r - origin));
  const auto key = std::make_tuple(static_cast<int>(op), bytes.count(), signature);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  if (nccl_) {
    TunerRequest request;
    request.op = op;
    request.bytes = bytes;
    request.include_launch_overhead = launch_overhead_;
    const Prediction p = nccl_->predict(request, groups[0]);
    return cache_[key] = nccl_->time(p, op, bytes, collective_type(bytes), groups,
                                     nccl_model_ ? nullptr : &engine_);
  }

  std::vector<std::uint32_t> globals;
  for (const auto& g : groups) globals.insert(globals.end(), g.begin(), g.end());
  MaterializedProgramSet set(static_cast<Rank>(globals.size()), DataType::Bf16);
  CollectiveFactory factory = default_collective_factory();
  Rank next = 0;
  for (const auto& g : groups) {
    std::vector<Rank> members(g.size());
    std::iota(members.begin(), members.end(), next);
    next += static_cast<Rank>(g.size());
    // Ring order follows nodes when the group is made of whole node blocks.
    std::uint32_t per_node = 0;
    if (gpus_per_node && g.size() > 1) {
      std::uint32_t block = 1;
      while (block < g.size() && g[block] / gpus_per_node == g[0] / gpus_per_node) ++block;
      if (block > 1 && block < g.size() && g.size() % block == 0) per_node = block;
    }
    auto programs = factory(op, static_cast<Rank>(g.size()), bytes, per_node);
    append_collective(set, *programs, members, std::vector<OpIndex>(g.size(), kNone), 0);
  }
  const Time t = run(set, globals, false, false).makespan;
  cache_.emplace(key, t);
  return t;
}

Time Runner::transfer(std::uint32_t from, std::uint32_t to, Bytes bytes) {
  MaterializedProgramSet set(2, DataType::Bf16);
  set.add(0, make_send(1, {Buffer::Input, 0, bytes.count()}));
  set.add(1, make_recv(0, {Buffer::Output, 0, bytes.count()}, RecvMode::Copy));
  return run(set, {from, to}, false, false).makespan;
}

std::vector<RankTimes> analyse(const StepPrograms& programs, const RunResult& run,
                               Time pp_transfer) {
  const Rank n = programs.programs->num_ranks();
  std::vector<RankTimes> out(n);
  for (Rank r = 0; r < n; ++r) {
    RankTimes& rt = out[r];
    TrainBreakdown& b = rt.parts;
    const auto& tags = programs.tags[r];
    const auto& times = run.ops[r];
    Time prev = Time::zero();
    // After an op that ends past Time's range (at infinity) the rest of the chain lies there
    // too and takes no time that can be told: the iteration is infinite, which
    // simulate_training refuses (docs/units.md).
    const auto between = [](Time from, Time to) {
      return from.is_finite() ? to - from : Time::zero();
    };
    // Kernels on a chain run one at a time (a DualPipe pair's two chains share the SMs): a
    // chain op claims the time from the chains' last end to its own; kernels running within
    // it make that time compute, the rest is the op's (with one chain: its wait and itself).
    std::vector<std::pair<Time, Time>> kernels;
    for (OpIndex i = 0; i < tags.size(); ++i) {
      const bool kernel = tags[i].role == OpRole::Forward || tags[i].role == OpRole::Backward;
      if (tags[i].chain && kernel && times[i].end.is_finite())
        kernels.emplace_back(times[i].start, times[i].end);
    }
    std::sort(kernels.begin(), kernels.end());
    const auto kernel_time = [&](Time from, Time to) {
      Time covered = Time::zero();
      auto k = std::lower_bound(kernels.begin(), kernels.end(), std::make_pair(from, from),
                                [](const auto& a, const auto& b) { return a.second < b.second; });
      for (; k != kernels.end() && k->first < to; ++k)
        covered += std::max(Time::zero(), std::min(to, k->second) - std::max(from, k->first));
      return covered;
    };
    for (OpIndex i = 0; i < tags.size(); ++i) {
      if (tags[i].role == OpRole::PpSend) rt.send_end = std::max(rt.send_end, times[i].end);
      if (tags[i].role == OpRole::DpComm) rt.reduced = std::max(rt.reduced, times[i].end);
      if (!tags[i].chain) continue;
      const Time from = std::max(prev, times[i].start);
      const Time covered = from.is_finite() && times[i].end.is_finite() && times[i].end > prev
                               ? kernel_time(prev, times[i].end)
                               : Time::zero();
      const Time wait = std::max(Time::zero(), between(prev, times[i].start));
      const Time busy = std::max(Time::zero(), between(from, times[i].end));
      const bool kernel = tags[i].role == OpRole::Forward || tags[i].role == OpRole::Backward;
      if (kernel && !times[i].end.is_finite()) {
        b.compute += busy;  // compute past Time's range: the iteration is infinite
        b.dp += wait;
        prev = times[i].end;
        continue;
      }
      const Time own = wait + busy - covered;
      b.compute += covered;
      switch (tags[i].role) {
        case OpRole::Forward:
        case OpRole::Backward:
          b.dp += own;  // a kernel waits beside its chain only for a ZeRO-3 parameter gather
          break;
        case OpRole::TpComm:
          b.tp += own;
          break;
        case OpRole::EpComm:
          b.ep += own;
          break;
        case OpRole::CpComm:
          b.cp += own;
          break;
        case OpRole::PpRecv: {
          // Waiting for a neighbour stage: the transfer itself is exposed communication, the
          // rest is the neighbour still computing (the pipeline bubble).
          const Time comm = std::min(own, pp_transfer);
          b.pp += comm;
          b.bubble += own - comm;
          break;
        }
        default:
          b.dp += own;
          break;
      }
      prev = std::max(prev, times[i].end);
    }
    rt.chain_end = prev;
    rt.reduced = std::max(rt.reduced, prev);
    rt.engine_finish = run.rank_finish[r];
    for (OpIndex k : programs.bucket_ready[r]) rt.bucket_ready.push_back(times[k].end);
  }
  return out;
}

namespace {
std::string slice_name(const OpTag& tag) {
  const std::string layer =
      tag.layer == kNone ? std::string("head") : fmt::format("L{}", tag.layer);
  switch (tag.role) {
    case OpRole::Forward:
      return fmt::format("F mb{} {}", tag.micro, layer);
    case OpRole::Backward:
      return fmt::format("B mb{} {}", tag.micro, layer);
    case OpRole::TpComm:
      return fmt::format("TP collective {}", layer);
    case OpRole::EpComm:
      return fmt::format("EP all-to-all {}", layer);
    case OpRole::CpComm:
      return fmt::format("CP KV ring {}", layer);
    case OpRole::PpRecv:
      return fmt::format("wait: pipeline stage (mb{})", tag.micro);
    case OpRole::PpSend:
      return fmt::format("send mb{}", tag.micro);
    case OpRole::ParamGather:
      return fmt::format("param all-gather {}", layer);
    case OpRole::DpComm:
      return fmt::format("DP gradients (after {})", layer);
    case OpRole::Optimizer:
      return "optimizer step";
    case OpRole::GradNorm:
      return "gradient-norm all-reduce";
    case OpRole::Join:
      return "join";
  }
  return "?";
}
}  // namespace

void append_timeline(const StepPrograms& programs, const RunResult& run, std::uint32_t r,
                     std::uint32_t global, std::vector<TimelineSlice>& out,
                     const MemberView& member, bool per_op, SliceNames& names) {
  auto intern = [&names](std::string name) -> std::string_view {
    return *names.insert(std::move(name)).first;
  };
  const auto& tags = programs.tags[r];
  const auto& times = run.ops[r];
  // Per chain: the end of what it has drawn, the layer pass being drawn as one slice (out[open]
  // covers it so far) and its latest slice (other tracks' slices may come between). A DualPipe
  // pair's backward chain runs beside the rank's chain: its slices go on a track of their own
  // (stream 3), so that neither track's slices overlap.
  Time prev[2] = {Time::zero(), Time::zero()};
  std::size_t open[2] = {SIZE_MAX, SIZE_MAX}, last[2] = {SIZE_MAX, SIZE_MAX};
  std::uint32_t open_layer[2] = {0, 0}, open_micro[2] = {0, 0};
  auto pass_part = [](OpRole role) {
    return role == OpRole::Forward || role == OpRole::Backward || role == OpRole::TpComm ||
           role == OpRole::EpComm || role == OpRole::CpComm;
  };
  auto push = [&](TimelineSlice&& s, const OpTag& tag) {
    if (s.end <= s.start) return;
    const bool chain_track = s.stream == 0 || s.stream == 3;
    const std::size_t c = s.stream == 3 ? 1 : 0;
    if (!per_op && chain_track && pass_part(tag.role)) {
      const bool kernel = tag.role == OpRole::Forward || tag.role == OpRole::Backward;
      if (open[c] != SIZE_MAX && open[c] == last[c] && open_layer[c] == tag.layer &&
          open_micro[c] == tag.micro) {
        TimelineSlice& o = out[open[c]];
        o.end = std::max(o.end, s.end);
        if (kernel && o.category != "forward" && o.category != "backward") {
          o.name = std::move(s.name);
          o.category = std::move(s.category);
        }
        return;
      }
      out.push_back(std::move(s));
      open[c] = last[c] = out.size() - 1;
      open_layer[c] = tag.layer;
      open_micro[c] = tag.micro;
      return;
    }
    if (chain_track) last[c] = out.size();
    out.push_back(std::move(s));
  };
  for (OpIndex i = 0; i < tags.size(); ++i) {
    const OpTag& tag = tags[i];
    TimelineSlice s;
    s.rank = global;
    s.name = intern(slice_name(tag));
    s.category = to_string(tag.role);
    if (tag.chain) {
      // Zero-time chain markers stand for the wait before them (a collective, a receive); a
      // join (a DualPipe pair's start or end) only moves its chain's drawn end.
      const bool marker = times[i].end == times[i].start;
      Time& drawn = prev[tag.paired ? 1 : 0];
      if (tag.role == OpRole::Join) {
        drawn = std::max(drawn, times[i].end);
        continue;
      }
      if (tag.paired) s.stream = 3;
      s.start = marker ? drawn : times[i].start;
      s.end = times[i].end;
      drawn = std::max(drawn, times[i].end);
      if (tag.role == OpRole::PpRecv) s.category = "wait";
      const bool kernel = tag.role == OpRole::Forward || tag.role == OpRole::Backward;
      if (kernel && member.own_fraction < 1 && s.end > s.start) {
        // The member's own kernel, then the wait for the group's slowest member.
        const Time own = (s.end - s.start).scaled(member.own_fraction);
        TimelineSlice wait{global,
                           0,
                           intern(fmt::format("wait: TP peer rank {}", member.waits_for)),
                           "wait",
                           s.start + own,
                           s.end};
        s.end = s.start + own;
        push(std::move(s), tag);
        push(std::move(wait), OpTag{});
        continue;
      }
    } else if (tag.role == OpRole::PpSend || tag.role == OpRole::DpComm ||
               tag.role == OpRole::ParamGather || tag.role == OpRole::Optimizer ||
               tag.role == OpRole::GradNorm) {
      // Off-chain communication: one slice per contiguous collective or send.
      s.stream = tag.role == OpRole::PpSend ? 2 : 1;
      s.start = times[i].start;
      s.end = times[i].end;
      if (!out.empty() && out.back().rank == global && out.back().stream == s.stream &&
          out.back().name == s.name && s.start <= out.back().end) {
        out.back().end = std::max(out.back().end, s.end);
        continue;
      }
    } else {
      continue;
    }
    push(std::move(s), tag);
  }
}

void append_end_waits(std::vector<TimelineSlice>& out, std::size_t begin, std::uint32_t global,
                      Time finish, Time iteration) {
  Time last = Time::zero();
  for (std::size_t i = begin; i < out.size(); ++i)
    if (out[i].stream != 1) last = std::max(last, out[i].end);
  if (finish > last)
    out.push_back({global, 0, "wait: data-parallel gradients", "wait", last, finish});
  last = std::max(last, finish);
  if (iteration > last) out.push_back({global, 0, "wait: slowest rank", "wait", last, iteration});
}

std::vector<LinkTrack> busiest_links(const Topology& topo, const RunResult& run,
                                     std::size_t count) {
  std::vector<const LinkSeries*> series;
  for (const auto& s : run.link_series) series.push_back(&s);
  auto total = [](const LinkSeries* s) {
    return std::accumulate(s->utilisation.begin(), s->utilisation.end(), 0.0);
  };
  std::stable_sort(series.begin(), series.end(),
                   [&](const LinkSeries* a, const LinkSeries* b) { return total(a) > total(b); });
  const Time period = run.link_sample_period > Time::zero() ? run.link_sample_period
                                                            : EngineOptions{}.link_sample_period;
  const DeviceNames names(topo);
  std::vector<LinkTrack> out;
  for (std::size_t i = 0; i < std::min(count, series.size()); ++i) {
    LinkTrack t;
    t.name = names.link_name(topo, series[i]->link);  // "node 3 nic 1 -> leaf 1 (rail 1)"
    t.period = period;
    t.utilisation = series[i]->utilisation;
    t.queue_bytes = series[i]->queue_bytes;
    t.events = series[i]->events;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace lockstep::train_detail

// A Chakra trace on a cluster: the checks of the graph across ranks, then an event-driven run of
// every rank's DAG with collectives and transfers priced by the NCCL model (docs/chakra.md).
#include "lockstep/chakra/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <unordered_map>

#include "lockstep/core/error.hpp"
#include "lockstep/engine/registry/registry.hpp"
#include "lockstep/nccl/groups.hpp"
#include "lockstep/topology/catalog.hpp"

namespace lockstep::chakra {
namespace {

constexpr std::uint32_t kNone = 0xFFFFFFFFu;

[[noreturn]] void fail(const RankTrace& t, const Node& n, const std::string& what) {
  throw InputError("", fmt::format("{}: node {} '{}': {}", t.file, n.id, n.name, what));
}

/// What a node's exposed time counts as: its group's parallel dimension when the group's name
/// says it, a pipeline transfer as "pp", else the collective's type.
std::string kind_of(const Node& n) {
  if (n.kind != NodeKind::Collective) return "pp";
  const std::string dim = dimension_of(n.group);
  return dim.empty() ? to_string(n.op) : dim;
}

/// A collective or transfer as every participant sees it: its members' (rank, node index).
struct Meeting {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> members;
  CollectiveOp op = CollectiveOp::AllReduce;
  Bytes bytes;
  std::vector<std::uint32_t> gpus;  // SendRecv: sender, receiver
  std::size_t arrived = 0;
  Time last_arrival;
};

/// The checked graph: per rank, each node's dependents and dependency count, and the meetings.
struct Graph {
  std::vector<std::vector<std::vector<std::uint32_t>>> dependents;  // [rank][node]
  std::vector<std::vector<std::uint32_t>> deps;                     // [rank][node]
  std::vector<std::vector<std::uint32_t>> meeting;                  // [rank][node] or kNone
  std::vector<Meeting> meetings;
  std::size_t groups = 0;
};

void check_rank(const RankTrace& t, Graph& g, std::uint32_t r) {
  std::unordered_map<std::uint64_t, std::uint32_t> index;
  for (std::uint32_t i = 0; i < t.nodes.size(); ++i) {
    if (!index.emplace(t.nodes[i].id, i).second) fail(t, t.nodes[i], "a second node with this id");
  }
  const std::size_t n = t.nodes.size();
  g.dependents[r].assign(n, {});
  g.deps[r].assign(n, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    const Node& node = t.nodes[i];
    std::set<std::uint32_t> seen;
    for (const auto* list : {&node.data_deps, &node.ctrl_deps}) {
      for (std::uint64_t d : *list) {
        auto it = index.find(d);
        if (it == index.end()) {
          fail(t, node,
               fmt::format("{} dependency {} is not a node of this file",
                           list == &node.data_deps ? "data" : "control", d));
        }
        if (it->second == i) fail(t, node, "depends on itself");
        if (!seen.insert(it->second).second) continue;  // both a data and a control dep
        g.dependents[r][it->second].push_back(i);
        ++g.deps[r][i];
      }
    }
  }
  // Kahn's order: what it cannot reach lies on a cycle or behind one.
  std::vector<std::uint32_t> left = g.deps[r];
  std::vector<std::uint32_t> ready;
  for (std::uint32_t i = 0; i < n; ++i)
    if (left[i] == 0) ready.push_back(i);
  std::size_t done = 0;
  while (!ready.empty()) {
    const std::uint32_t i = ready.back();
    ready.pop_back();
    ++done;
    for (std::uint32_t d : g.dependents[r][i])
      if (--left[d] == 0) ready.push_back(d);
  }
  if (done < n) {
    // Walk back along unfinished dependencies until a node repeats: it is on a cycle.
    std::uint32_t i = 0;
    while (left[i] == 0) ++i;
    std::vector<char> visited(n, 0);
    while (!visited[i]) {
      visited[i] = 1;
      const Node& node = t.nodes[i];
      for (const auto* list : {&node.data_deps, &node.ctrl_deps}) {
        for (std::uint64_t d : *list) {
          if (left[index[d]] != 0) {
            i = index[d];
            goto next;
          }
        }
      }
    next:;
    }
    fail(t, t.nodes[i], "lies on a dependency cycle");
  }
}

void match_collectives(const std::vector<RankTrace>& traces, Graph& g) {
  const auto ranks = static_cast<std::uint32_t>(traces.size());
  // Members of a process group: the ranks with collectives of that name ("": every rank).
  std::map<std::string, std::vector<std::uint32_t>> members;
  // Per group and rank: the collectives in id order (PyTorch's traces number nodes as issued).
  std::map<std::string, std::map<std::uint32_t, std::vector<std::uint32_t>>> issued;
  for (std::uint32_t r = 0; r < ranks; ++r) {
    std::vector<std::uint32_t> order(traces[r].nodes.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return traces[r].nodes[a].id < traces[r].nodes[b].id;
    });
    for (std::uint32_t i : order) {
      const Node& n = traces[r].nodes[i];
      if (n.kind == NodeKind::Collective) issued[n.group][r].push_back(i);
    }
  }
  for (auto& [name, by_rank] : issued) {
    std::vector<std::uint32_t> m;
    if (name.empty()) {
      for (std::uint32_t r = 0; r < ranks; ++r) m.push_back(r);
    } else {
      for (const auto& [r, list] : by_rank) m.push_back(r);
    }
    const std::string label = name.empty() ? "of every rank" : "'" + name + "'";
    const std::uint32_t first = m[0];
    const auto& reference = by_rank[first];
    for (std::uint32_t r : m) {
      const auto& list = by_rank[r];
      if (list.size() != reference.size()) {
        const RankTrace& t = list.size() < reference.size() ? traces[r] : traces[first];
        const auto& shorter = list.size() < reference.size() ? list : reference;
        const auto& longer = list.size() < reference.size() ? reference : list;
        const RankTrace& other = list.size() < reference.size() ? traces[first] : traces[r];
        const Node& missing = other.nodes[longer[shorter.size()]];
        throw InputError(
            "", fmt::format("{}: node {} '{}': collective {} of group {} has no match in {} "
                            "({} collectives there, {} here)",
                            other.file, missing.id, missing.name, shorter.size(), label, t.file,
                            shorter.size(), longer.size()));
      }
    }
    ++g.groups;
    for (std::size_t k = 0; k < reference.size(); ++k) {
      Meeting meeting;
      const Node& ref = traces[first].nodes[reference[k]];
      meeting.op = ref.op;
      meeting.bytes = ref.size;
      for (std::uint32_t r : m) {
        const Node& n = traces[r].nodes[by_rank[r][k]];
        if (n.op != ref.op || n.size != ref.size) {
          fail(traces[r], n,
               fmt::format("{} of {} B, but collective {} of group {} is {} of {} B in {} "
                           "(node {})",
                           to_string(n.op), n.size.count(), k, label, to_string(ref.op),
                           ref.size.count(), traces[first].file, ref.id));
        }
        meeting.members.emplace_back(r, by_rank[r][k]);
        meeting.gpus.push_back(r);
        g.meeting[r][by_rank[r][k]] = static_cast<std::uint32_t>(g.meetings.size());
      }
      g.meetings.push_back(std::move(meeting));
    }
  }
}

void match_transfers(const std::vector<RankTrace>& traces, Graph& g) {
  const auto ranks = static_cast<std::uint32_t>(traces.size());
  // (src, dst, tag) -> the sends at src and the receives at dst, in id order.
  using Key = std::tuple<std::uint32_t, std::uint32_t, std::int64_t>;
  std::map<Key, std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> pairs;
  for (std::uint32_t r = 0; r < ranks; ++r) {
    const RankTrace& t = traces[r];
    std::vector<std::uint32_t> order;
    for (std::uint32_t i = 0; i < t.nodes.size(); ++i) {
      const Node& n = t.nodes[i];
      if (n.kind != NodeKind::Send && n.kind != NodeKind::Recv) continue;
      if (n.peer >= ranks || n.peer == r) {
        fail(t, n,
             fmt::format("{} {} is not another rank of the trace (0..{})",
                         n.kind == NodeKind::Send ? "comm_dst" : "comm_src", n.peer, ranks - 1));
      }
      order.push_back(i);
    }
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return t.nodes[a].id < t.nodes[b].id; });
    for (std::uint32_t i : order) {
      const Node& n = t.nodes[i];
      if (n.kind == NodeKind::Send) {
        pairs[{r, n.peer, n.tag}].first.push_back(i);
      } else {
        pairs[{n.peer, r, n.tag}].second.push_back(i);
      }
    }
  }
  for (const auto& [key, lists] : pairs) {
    const auto [src, dst, tag] = key;
    const auto& [sends, recvs] = lists;
    const std::size_t common = std::min(sends.size(), recvs.size());
    if (sends.size() != recvs.size()) {
      const bool send_left = sends.size() > recvs.size();
      const RankTrace& t = traces[send_left ? src : dst];
      const Node& n = t.nodes[send_left ? sends[common] : recvs[common]];
      fail(t, n,
           fmt::format("{} has no matching {} in {} (tag {})", send_left ? "send" : "receive",
                       send_left ? "receive" : "send", traces[send_left ? dst : src].file, tag));
    }
    for (std::size_t k = 0; k < common; ++k) {
      const Node& s = traces[src].nodes[sends[k]];
      const Node& v = traces[dst].nodes[recvs[k]];
      if (s.size != v.size) {
        fail(traces[dst], v,
             fmt::format("receives {} B, but its send (node {} of {}) sends {} B", v.size.count(),
                         s.id, traces[src].file, s.size.count()));
      }
      Meeting meeting;
      meeting.op = CollectiveOp::SendRecv;
      meeting.bytes = s.size;
      meeting.members = {{src, sends[k]}, {dst, recvs[k]}};
      meeting.gpus = {src, dst};
      g.meeting[src][sends[k]] = static_cast<std::uint32_t>(g.meetings.size());
      g.meeting[dst][recvs[k]] = static_cast<std::uint32_t>(g.meetings.size());
      g.meetings.push_back(std::move(meeting));
    }
  }
}

Graph build(const std::vector<RankTrace>& traces) {
  Graph g;
  const std::size_t ranks = traces.size();
  g.dependents.resize(ranks);
  g.deps.resize(ranks);
  g.meeting.resize(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    check_rank(traces[r], g, r);
    g.meeting[r].assign(traces[r].nodes.size(), kNone);
  }
  match_collectives(traces, g);
  match_transfers(traces, g);
  return g;
}

/// Time of one rank's activity: compute intervals and communication intervals with their kinds.
struct Activity {
  std::vector<std::pair<Time, Time>> compute;
  std::vector<std::tuple<Time, Time, std::string>> comm;
};

/// Splits [0, step] into compute, exposed communication (the kind of the earliest-started of
/// those in flight) and idle.
Breakdown attribute(const Activity& a, Time step, std::map<std::string, Time>& comm_out) {
  struct Edge {
    Time at;
    int what;  // -1: compute, else the index into a.comm
    bool start;
  };
  // Zero-length intervals take no time (and their end, sorted before their start, would leave
  // them in flight).
  std::vector<Edge> edges;
  for (const auto& [s, e] : a.compute) {
    if (e <= s) continue;
    edges.push_back({s, -1, true});
    edges.push_back({e, -1, false});
  }
  for (std::size_t i = 0; i < a.comm.size(); ++i) {
    if (std::get<1>(a.comm[i]) <= std::get<0>(a.comm[i])) continue;
    edges.push_back({std::get<0>(a.comm[i]), static_cast<int>(i), true});
    edges.push_back({std::get<1>(a.comm[i]), static_cast<int>(i), false});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) {
    return x.at != y.at ? x.at < y.at : (!x.start && y.start);
  });
  Breakdown b;
  int computing = 0;
  std::set<std::pair<Time, int>> in_flight;  // (start, comm index)
  Time at = Time::zero();
  auto account = [&](Time until) {
    const Time span = until - at;
    if (span <= Time::zero()) return;
    if (computing > 0) {
      b.compute = b.compute + span;
    } else if (!in_flight.empty()) {
      Time& t = comm_out[std::get<2>(a.comm[in_flight.begin()->second])];
      t = t + span;
    } else {
      b.idle = b.idle + span;
    }
  };
  for (const Edge& e : edges) {
    account(e.at);
    at = std::max(at, e.at);
    if (e.what < 0) {
      computing += e.start ? 1 : -1;
    } else if (e.start) {
      in_flight.emplace(e.at, e.what);
    } else {
      in_flight.erase({std::get<0>(a.comm[e.what]), e.what});
    }
  }
  account(step);
  return b;
}

}  // namespace

std::string dimension_of(const std::string& group) {
  std::string g;
  for (char c : group) g += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // lockstep's own export and short names: "tp0", "dp_3", "pp", "ep-1".
  for (const char* dim : {"tp", "dp", "pp", "ep", "cp"}) {
    if (g.rfind(dim, 0) == 0 && (g.size() == 2 || !std::isalpha(static_cast<unsigned char>(g[2]))))
      return dim;
  }
  // Megatron-LM's group descriptions (parallel_state.py: TENSOR_MODEL_PARALLEL_GROUP, ...);
  // the expert and combined groups first, as their names contain the plain ones.
  const std::pair<const char*, const char*> words[] = {{"expert_model_parallel", "ep"},
                                                       {"expert_data_parallel", "dp"},
                                                       {"tensor_and", ""},
                                                       {"context_parallel", "cp"},
                                                       {"tensor_model_parallel", "tp"},
                                                       {"pipeline_model_parallel", "pp"},
                                                       {"data_parallel", "dp"}};
  for (const auto& [word, dim] : words)
    if (g.find(word) != std::string::npos) return dim;
  return "";
}

void check_traces(const std::vector<RankTrace>& traces) {
  build(traces);
}

TraceResult run_traces(const std::vector<RankTrace>& traces, const Topology& topology,
                       const RunOptions& options) {
  const auto ranks = static_cast<std::uint32_t>(traces.size());
  if (topology.gpus().size() < ranks) {
    throw InputError("", fmt::format("the trace has {} ranks and the cluster {} GPUs: give a "
                                     "cluster of at least {} GPUs",
                                     ranks, topology.gpus().size(), ranks));
  }
  Graph g = build(traces);
  TraceResult result;
  result.engine = options.engine;
  result.ranks = ranks;
  result.groups = g.groups;
  const double peak = options.peak_flops > 0 ? options.peak_flops
                                             : gpu_spec(topology.traits().gpu).bf16_dense_flops;

  // The NCCL model on the cluster: analytical takes its own times, another engine runs them.
  NcclGroups nccl(topology);
  std::unique_ptr<Engine> engine;
  if (options.engine != kNcclModelEngine) engine = make_engine(options.engine);
  std::map<std::tuple<int, std::uint64_t, std::vector<std::uint32_t>>, Time> priced;
  auto price = [&](const Meeting& m) {
    if (m.bytes.count() == 0 || m.gpus.size() < 2) return Time::zero();
    auto key = std::make_tuple(static_cast<int>(m.op), m.bytes.count(), m.gpus);
    if (auto it = priced.find(key); it != priced.end()) return it->second;
    const DataType type = m.bytes.count() % 2 == 0 ? DataType::Bf16 : DataType::Uint8;
    const GpuGroup group(m.gpus.begin(), m.gpus.end());
    const Prediction p = nccl.predict({.op = m.op, .bytes = m.bytes}, group);
    const Time t = nccl.time(p, m.op, m.bytes, type, {group}, engine.get());
    priced.emplace(std::move(key), t);
    return t;
  };

  // Event loop: (time, sequence) -> a node finished.
  struct Event {
    Time at;
    std::uint64_t seq;
    std::uint32_t rank, node;
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::uint64_t seq = 0;
  std::vector<std::vector<std::uint32_t>> left = g.deps;
  // Compute nodes waiting for their GPU: (ready time, id, index), the earliest first.
  using Waiting = std::tuple<Time, std::uint64_t, std::uint32_t>;
  std::vector<std::priority_queue<Waiting, std::vector<Waiting>, std::greater<>>> gpu_queue(ranks);
  std::vector<char> gpu_busy(ranks, 0);
  std::vector<Activity> activity(ranks);
  result.rank_finish.assign(ranks, Time::zero());

  auto compute_time = [&](std::uint32_t r, const Node& n) {
    if (n.has_duration) return n.duration;
    if (n.flops <= 0) return Time::zero();
    const Time t = Time::from_ps(n.flops / peak * 1e12);
    if (!t.is_finite()) {
      fail(traces[r], n,
           fmt::format("{:g} FLOPs at {:g} TFLOP/s are past lockstep's time range ({})", n.flops,
                       peak / 1e12, kTimeRange));
    }
    return t;
  };
  auto start_compute = [&](std::uint32_t r, Time now) {
    if (gpu_busy[r] || gpu_queue[r].empty()) return;
    const std::uint32_t i = std::get<2>(gpu_queue[r].top());
    gpu_queue[r].pop();
    gpu_busy[r] = 1;
    const Time end = now + compute_time(r, traces[r].nodes[i]);
    activity[r].compute.emplace_back(now, end);
    events.push({end, seq++, r, i});
  };
  auto ready = [&](std::uint32_t r, std::uint32_t i, Time now) {
    const Node& n = traces[r].nodes[i];
    switch (n.kind) {
      case NodeKind::Compute:
        gpu_queue[r].emplace(now, n.id, i);
        start_compute(r, now);
        break;
      case NodeKind::Collective:
      case NodeKind::Send:
      case NodeKind::Recv: {
        Meeting& m = g.meetings[g.meeting[r][i]];
        m.last_arrival = std::max(m.last_arrival, now);
        if (++m.arrived < m.members.size()) break;
        const Time start = m.last_arrival;
        const Time end = start + price(m);
        for (const auto& [mr, mi] : m.members) {
          activity[mr].comm.emplace_back(start, end, kind_of(traces[mr].nodes[mi]));
          events.push({end, seq++, mr, mi});
        }
        break;
      }
      case NodeKind::Skipped:
        events.push({now, seq++, r, i});
        break;
    }
  };

  for (std::uint32_t r = 0; r < ranks; ++r) {
    const RankTrace& t = traces[r];
    result.nodes += t.nodes.size();
    for (const Node& n : t.nodes) {
      result.compute_nodes += n.kind == NodeKind::Compute;
      result.flops_timed += n.kind == NodeKind::Compute && !n.has_duration && n.flops > 0;
      result.skipped += n.kind == NodeKind::Skipped;
    }
  }
  for (const Meeting& m : g.meetings) {
    (m.op == CollectiveOp::SendRecv ? result.transfers : result.collectives) += 1;
  }
  for (std::uint32_t r = 0; r < ranks; ++r) {
    for (std::uint32_t i = 0; i < traces[r].nodes.size(); ++i)
      if (left[r][i] == 0) ready(r, i, Time::zero());
  }
  std::size_t finished = 0;
  while (!events.empty()) {
    const Event e = events.top();
    events.pop();
    ++finished;
    result.rank_finish[e.rank] = std::max(result.rank_finish[e.rank], e.at);
    if (traces[e.rank].nodes[e.node].kind == NodeKind::Compute) {
      gpu_busy[e.rank] = 0;
      start_compute(e.rank, e.at);
    }
    for (std::uint32_t d : g.dependents[e.rank][e.node]) {
      if (--left[e.rank][d] == 0) ready(e.rank, d, e.at);
    }
  }
  if (finished < result.nodes) {
    // A collective or transfer some member never reaches: name one waiting and one missing.
    for (const Meeting& m : g.meetings) {
      if (m.arrived == 0 || m.arrived == m.members.size()) continue;
      const auto there = [&](const std::pair<std::uint32_t, std::uint32_t>& x) {
        return left[x.first][x.second] == 0;
      };
      const auto w = *std::find_if(m.members.begin(), m.members.end(), there);
      const auto a = *std::find_if_not(m.members.begin(), m.members.end(), there);
      const Node& absent = traces[a.first].nodes[a.second];
      fail(traces[w.first], traces[w.first].nodes[w.second],
           fmt::format("deadlock: waits for {} node {} '{}', which never becomes ready",
                       traces[a.first].file, absent.id, absent.name));
    }
    throw InputError("", "the trace deadlocks: collectives or transfers wait for each other");
  }
  for (Time t : result.rank_finish) result.step = std::max(result.step, t);
  if (!result.step.is_finite()) {
    throw InputError(
        "", fmt::format("the trace's step is past lockstep's time range ({})", kTimeRange));
  }

  std::map<std::string, Time> comm;
  const auto n = static_cast<std::int64_t>(ranks);
  Time compute, idle;
  for (std::uint32_t r = 0; r < ranks; ++r) {
    const Breakdown b = attribute(activity[r], result.step, comm);
    compute = compute + b.compute;
    idle = idle + b.idle;
  }
  result.mean.compute = Time::ps(compute.picoseconds() / n);
  result.mean.idle = Time::ps(idle.picoseconds() / n);
  // train's order (tp, ep, cp, pp, dp), then the collective types of unnamed groups.
  auto rank_of = [](const std::string& kind) {
    const char* dims[] = {"tp", "ep", "cp", "pp", "dp"};
    for (int i = 0; i < 5; ++i)
      if (kind == dims[i]) return i;
    return 5;
  };
  for (const auto& [kind, t] : comm)
    result.mean.comm.emplace_back(kind, Time::ps(t.picoseconds() / n));
  std::stable_sort(
      result.mean.comm.begin(), result.mean.comm.end(),
      [&](const auto& a, const auto& b) { return rank_of(a.first) < rank_of(b.first); });
  return result;
}

}  // namespace lockstep::chakra

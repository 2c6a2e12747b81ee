// verify_collective: deterministic inputs, one functional run, and a direct reference computation
// of what each rank's output must hold (see collective.hpp for the buffer layouts).
#include "lockstep/engine/functional/verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "lockstep/core/rng.hpp"
#include "reduce.hpp"

namespace lockstep {
namespace {

using functional_detail::bf16_to_float;
using functional_detail::float_to_bf16;
using Bytes_ = std::vector<std::byte>;

bool is_float(DataType t) {
  return t == DataType::Float32 || t == DataType::Float64 || t == DataType::Bf16;
}

double unit_roundoff(DataType t) {
  switch (t) {
    case DataType::Float32:
      return std::ldexp(1.0, -24);
    case DataType::Float64:
      return std::ldexp(1.0, -53);
    case DataType::Bf16:
      return std::ldexp(1.0, -8);
    default:
      return 0.0;
  }
}

// Pseudo-random contents: any bit pattern for integers, uniform in [-1, 1) for floats.
void fill(Bytes_& buf, DataType t, std::uint64_t seed, Rank r) {
  const std::size_t es = size_of(t);
  const std::uint64_t base = mix64(seed ^ mix64(std::uint64_t{r} + 1));
  if (!is_float(t)) {  // one hash per 8 bytes
    for (std::uint64_t at = 0; at < buf.size(); at += 8) {
      const std::uint64_t h = mix64(base + at);
      std::memcpy(buf.data() + at, &h, std::min<std::uint64_t>(8, buf.size() - at));
    }
    return;
  }
  const std::uint64_t count = buf.size() / es;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t h = mix64(base + i);
    const double u = static_cast<double>(h >> 11) * std::ldexp(1.0, -53) * 2.0 - 1.0;
    std::byte* p = buf.data() + i * es;
    if (t == DataType::Float32) {
      const float f = static_cast<float>(u);
      std::memcpy(p, &f, 4);
    } else if (t == DataType::Float64) {
      std::memcpy(p, &u, 8);
    } else {
      const std::uint16_t b = float_to_bf16(static_cast<float>(u));
      std::memcpy(p, &b, 2);
    }
  }
}

double load(const std::byte* p, DataType t) {
  if (t == DataType::Float32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (t == DataType::Float64) {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  std::uint16_t b;
  std::memcpy(&b, p, 2);
  return bf16_to_float(b);
}

class Checker {
 public:
  Checker(DataType t, Rank n) : t_(t), es_(size_of(t)), n_(n), u_(unit_roundoff(t)) {}

  // The reference sum of all inputs over the whole buffer, computed once: exact modular sums
  // for integers, double-precision sums and magnitudes for floating point.
  void prepare_sum(const std::vector<Bytes_>& in, std::uint64_t elements) {
    if (!is_float(t_)) {
      ref_.assign(in[0].begin(), in[0].begin() + elements * es_);
      for (std::size_t k = 1; k < in.size(); ++k)
        functional_detail::reduce_into(ref_.data(), in[k].data(), elements * es_, t_);
      return;
    }
    exact_.assign(elements, 0.0);
    magnitude_.assign(elements, 0.0);
    for (const Bytes_& b : in) {
      for (std::uint64_t i = 0; i < elements; ++i) {
        const double x = load(b.data() + i * es_, t_);
        exact_[i] += x;
        magnitude_[i] += std::fabs(x);
      }
    }
  }

  // out[0, count) must equal elements [first, first + count) of the reference sum.
  bool sum(Rank r, const std::byte* out, std::uint64_t first, std::uint64_t count) {
    if (!is_float(t_)) return bytes(r, out, ref_.data() + first * es_, first, count);
    for (std::uint64_t i = 0; i < count; ++i) {
      const double got = load(out + i * es_, t_), want = exact_[first + i];
      const double tol = (n_ - 1) * u_ * magnitude_[first + i] + 1e-30;
      if (!(std::fabs(got - want) <= tol)) {
        message_ = fmt::format("rank {} element {}: got {} expected {} (tolerance {:.3g})", r,
                               first + i, got, want, tol);
        return false;
      }
    }
    return true;
  }

  // Bit-exact copy check.
  bool bytes(Rank r, const std::byte* out, const std::byte* ref, std::uint64_t first_elem,
             std::uint64_t count) {
    if (count == 0 || std::memcmp(out, ref, count * es_) == 0) return true;
    for (std::uint64_t i = 0; i < count; ++i) {
      if (std::memcmp(out + i * es_, ref + i * es_, es_) != 0) {
        message_ = fmt::format("rank {} element {}: wrong value", r, first_elem + i);
        return false;
      }
    }
    return true;
  }

  const std::string& message() const { return message_; }
  double tolerance() const { return u_ * (n_ - 1); }

 private:
  DataType t_;
  std::size_t es_;
  Rank n_;
  double u_;
  std::string message_;
  Bytes_ ref_;
  std::vector<double> exact_, magnitude_;
};

// Compares every rank's output with the reference; returns false at the first mismatch.
bool check(const CollectiveSpec& spec, const std::vector<Bytes_>& in,
           const std::vector<RankBuffers>& bufs, const FunctionalResult& run, Checker& c) {
  const Rank n = spec.ranks;
  const std::size_t es = size_of(spec.type);
  const std::uint64_t e = spec.elements();
  const auto block = [&](Rank j) { return block_start(e, n, j); };
  const auto bsize = [&](Rank j) { return block_size(e, n, j); };
  if (spec.op == CollectiveOp::AllReduce || spec.op == CollectiveOp::Reduce ||
      spec.op == CollectiveOp::ReduceScatter)
    c.prepare_sum(in, e);
  for (Rank r = 0; r < n; ++r) {
    const std::byte* out = bufs[r].out().data();
    switch (spec.op) {
      case CollectiveOp::AllReduce:
        if (!c.sum(r, out, 0, e)) return false;
        break;
      case CollectiveOp::Reduce:
        if (r == spec.root && !c.sum(r, out, 0, e)) return false;
        break;
      case CollectiveOp::ReduceScatter:
        if (!c.sum(r, out, block(r), bsize(r))) return false;
        break;
      case CollectiveOp::AllGather:
        for (Rank j = 0; j < n; ++j)
          if (!c.bytes(r, out + block(j) * es, in[j].data(), block(j), bsize(j))) return false;
        break;
      case CollectiveOp::Broadcast:
        if (!c.bytes(r, out, in[spec.root].data(), 0, e)) return false;
        break;
      case CollectiveOp::AllToAll:
        for (Rank i = 0; i < n; ++i)
          if (!c.bytes(r, out + i * bsize(r) * es, in[i].data() + block(r) * es, i * bsize(r),
                       bsize(r)))
            return false;
        break;
      case CollectiveOp::AllToAllV: {
        std::uint64_t at = 0;
        for (Rank i = 0; i < n; ++i) {
          std::uint64_t off = 0;
          for (Rank j = 0; j < r; ++j) off += spec.alltoallv[i][j];
          const std::uint64_t len = spec.alltoallv[i][r];
          if (!c.bytes(r, out + at, in[i].data() + off, at / es, len / es)) return false;
          at += len;
        }
        break;
      }
      case CollectiveOp::SendRecv:
        if (!c.bytes(r, out, in[(r + n - 1) % n].data(), 0, e)) return false;
        break;
      case CollectiveOp::Barrier:
        for (Rank k = 0; k < n; ++k) {
          if (!(run.heard[r][k / 64] >> (k % 64) & 1)) return false;
        }
        break;
    }
  }
  return true;
}

// The buffer sizes the layout in collective.hpp implies, to refuse programs that disagree.
BufferSizes expected_buffers(const CollectiveSpec& spec, Rank r) {
  const std::uint64_t es = size_of(spec.type), e = spec.elements(), n = spec.ranks;
  const std::uint64_t blk = block_size(e, n, r) * es;
  BufferSizes b;
  switch (spec.op) {
    case CollectiveOp::AllGather:
      return {blk, e * es, 0, false};
    case CollectiveOp::ReduceScatter:
      return {e * es, blk, 0, false};
    case CollectiveOp::AllToAll:
      return {e * es, n * blk, 0, false};
    case CollectiveOp::AllToAllV:
      for (Rank j = 0; j < n; ++j) {
        b.input += spec.alltoallv[r][j];
        b.output += spec.alltoallv[j][r];
      }
      return b;
    case CollectiveOp::Barrier:
      return b;
    default:
      return {e * es, e * es, 0, false};
  }
}

}  // namespace

VerifyReport verify_collective(const CollectiveSpec& spec, const ProgramSet& programs,
                               const FunctionalOptions& options, std::uint64_t seed) {
  if (programs.num_ranks() != spec.ranks) {
    VerifyReport rep;
    rep.message = fmt::format("the programs have {} ranks, the collective {}", programs.num_ranks(),
                              spec.ranks);
    return rep;
  }
  FunctionalOptions opt = options;
  opt.move_data = true;
  opt.track_causality = spec.op == CollectiveOp::Barrier;
  std::vector<RankBuffers> bufs = allocate_buffers(programs);
  std::vector<Bytes_> inputs(programs.num_ranks());
  for (Rank r = 0; r < programs.num_ranks(); ++r) {
    fill(bufs[r].input, spec.type, seed, r);
    inputs[r] = bufs[r].input;
  }
  VerifyReport rep;
  for (Rank r = 0; r < programs.num_ranks(); ++r) {
    const BufferSizes want = expected_buffers(spec, r);
    if (bufs[r].input.size() != want.input || bufs[r].out().size() != want.output) {
      rep.message = fmt::format(
          "rank {}: buffers of {} B in / {} B out, the collective needs {} "
          "B / {} B",
          r, bufs[r].input.size(), bufs[r].out().size(), want.input, want.output);
      return rep;
    }
  }
  rep.run = execute(programs, bufs, opt);
  Checker c(spec.type, spec.ranks);
  const bool sums = spec.op == CollectiveOp::AllReduce || spec.op == CollectiveOp::Reduce ||
                    spec.op == CollectiveOp::ReduceScatter;
  rep.tolerance = sums ? c.tolerance() : 0.0;  // copies are always bit-exact
  rep.ok = check(spec, inputs, bufs, rep.run, c);
  rep.message = rep.ok                             ? "correct"
                : spec.op == CollectiveOp::Barrier ? "a rank finished before hearing from all"
                                                   : c.message();
  return rep;
}

}  // namespace lockstep

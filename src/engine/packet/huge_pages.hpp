#pragma once
// Transparent huge pages for the packet engine's large arrays (Linux; a no-op elsewhere). At
// 8,192 hosts the packets in flight (100 MB) and the per-link state are read at random: with
// 4 KiB pages nearly every access also misses the TLB (an STLB of ~2K entries covers 8 MiB) and
// waits for a page walk, which a software prefetch waits for too (`perf` put 11% of the run
// on the instruction after the next packet's prefetch). 2 MiB pages cover those arrays with
// about a hundred TLB entries: 15.8 -> 13.9 s CPU at 8,192 hosts. The kernel gives them to regions
// advised MADV_HUGEPAGE when THP is in `madvise` mode (Debian's default;
// Documentation/admin-guide/mm/transhuge.rst); advice must come before the pages are first touched,
// so arrays are reserved, advised, then filled.
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace lockstep::packet {

inline constexpr std::size_t kHugePage = std::size_t{2} << 20;

/// Advises the whole 2 MiB pages inside [p, p + bytes) (none for arrays under 2 MiB).
inline void advise_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + kHugePage - 1) & ~(kHugePage - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kHugePage - 1);
  // Advice only: where the kernel refuses it the pages stay 4 KiB and the run the same.
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

/// Empties `v` and gives it room for n elements, advised; fill it next (assign, resize).
template <class T>
void reserve_on_huge_pages(std::vector<T>& v, std::size_t n) {
  std::vector<T>().swap(v);
  v.reserve(n);
  advise_huge_pages(v.data(), n * sizeof(T));
}

/// Gives `v` room for n elements, keeping them: a full vector moves to advised room twice its
/// capacity (or n), as push_back would have grown it. For arrays that grow during the run.
template <class T>
void grow_on_huge_pages(std::vector<T>& v, std::size_t n) {
  if (n <= v.capacity()) return;
  std::vector<T> w;
  reserve_on_huge_pages(w, std::max(n, 2 * v.capacity()));
  w.insert(w.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
  v.swap(w);
}

/// A flow's per-packet array (PerPacketArena): n elements in room of one of the arena's size
/// classes. A handle, copied freely; the arena owns the memory. Cleared, it keeps its room for the
/// next transfer of the flow's slot.
template <class T>
class PerPacket {
 public:
  bool empty() const { return size_ == 0; }
  std::uint32_t size() const { return size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  void clear() { size_ = 0; }

 private:
  friend class PerPacketArena;
  T* data_ = nullptr;
  std::uint32_t size_ = 0;
  std::size_t room_ = 0;  // bytes
};

/// The flows' per-packet arrays (UEC's PSN state and send times, the receiver's arrivals), which
/// every ACK and arrival reads at random: 40 MB at 8,192 hosts in ~25 K small heap blocks on
/// 4 KiB pages. Here they are cut from chunks that grow to 2 MiB, then 2 MiB-aligned and advised
/// (a small run touches only the small first chunks), with one free list per size class through
/// the blocks' first word; arrays over 1 MiB get chunks of their own. The classes are quarter
/// powers of two (1, 1.25, 1.5, 1.75 x 2^k) in multiples of 64 B, as jemalloc's size classes
/// (four per doubling; its man page, "Size classes"): an array just past a power of two wastes at
/// most a fifth of its room, not half (TCP's 1,380 send times, 11,040 B, in 12 KiB, not 16).
class PerPacketArena {
 public:
  template <class T>
  void assign(PerPacket<T>& a, std::uint32_t n, T value) {
    static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= 64);
    const std::size_t bytes = std::size_t{n} * sizeof(T);
    if (bytes > a.room_) {
      give(a.data_, a.room_);
      const std::size_t room = room_for(bytes);
      a.data_ = static_cast<T*>(take(room));
      a.room_ = room;
    }
    a.size_ = n;
    std::fill_n(a.data_, n, value);
  }

  /// The room given to an array of `bytes`: the smallest class holding it. Below 256 B a quarter
  /// step is under 64 B, so the classes there are 64, 128 and 192.
  static std::size_t room_for(std::size_t bytes) {
    bytes = std::max<std::size_t>(bytes, 64);
    const std::size_t step = std::max<std::size_t>(std::bit_floor(bytes) / 4, 64);
    return (bytes + step - 1) / step * step;
  }

  /// The largest class not over `bytes` (a multiple of 64, at least 64): how a chunk's tail is cut.
  static std::size_t room_within(std::size_t bytes) {
    const std::size_t step = std::max<std::size_t>(std::bit_floor(bytes) / 4, 64);
    return bytes / step * step;
  }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  // Four classes per power of two: 4 x k plus the quarter (64 = 24, 128 = 28, 192 = 30, 256 = 32).
  static std::size_t size_class(std::size_t room) {
    const int k = std::bit_width(room) - 1;
    return 4 * static_cast<std::size_t>(k) + ((room >> (k - 2)) & 3);
  }
  void give(void* p, std::size_t room) {
    if (p == nullptr) return;
    *static_cast<void**>(p) = free_[size_class(room)];
    free_[size_class(room)] = p;
  }
  void* take(std::size_t room) {
    if (void* p = free_[size_class(room)]) {
      free_[size_class(room)] = *static_cast<void**>(p);
      return p;
    }
    if (room > kHugePage / 2) return chunk(room);
    if (static_cast<std::size_t>(end_ - bump_) < room) {
      // The tail left (less than `room`) goes to the free lists, largest blocks first.
      while (end_ - bump_ >= 64) {
        const std::size_t r = room_within(static_cast<std::size_t>(end_ - bump_));
        give(bump_, r);
        bump_ += r;
      }
      const std::size_t size = std::min(kHugePage, std::size_t{64} << 10 << chunks_.size());
      bump_ = chunk(size);
      end_ = bump_ + size;
    }
    std::byte* p = bump_;
    bump_ += room;
    return p;
  }
  std::byte* chunk(std::size_t bytes) {
    const std::size_t align = bytes >= kHugePage ? kHugePage : 64;
    bytes = (bytes + align - 1) / align * align;
    auto* raw = static_cast<std::byte*>(std::aligned_alloc(align, bytes));
    if (raw == nullptr) throw std::bad_alloc();
    advise_huge_pages(raw, bytes);
    chunks_.emplace_back(raw);
    return raw;
  }
  std::array<void*, 4 * 64> free_{};
  std::vector<std::unique_ptr<std::byte, Free>> chunks_;
  std::byte* bump_ = nullptr;
  std::byte* end_ = nullptr;
};

}  // namespace lockstep::packet

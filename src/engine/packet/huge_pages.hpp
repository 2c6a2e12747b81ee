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
#include <cstddef>
#include <cstdint>
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

}  // namespace lockstep::packet

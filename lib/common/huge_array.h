// Large arrays a worker reads at random (the flowlet tables): value-initialized elements in
// anonymous memory aligned to 2 MiB and advised MADV_HUGEPAGE, so the kernel backs them with
// transparent huge pages where THP is "always" or "madvise" (Debian's default). A 1 MiB table
// then costs the worker one TLB entry instead of 256. glibc's `new` gives a large array its own
// 4 KiB-page mapping that "madvise" mode never makes huge, and EAL memory is 4 KiB pages
// without hugetlbfs (a memfd, which THP does not back by default), so a table read at random
// per packet missed the TLB beside the mbufs (doc/performance.md, "Where the cycles go").
//
// Arrays below kHugeArrayMin bytes, and any array when mmap fails, use aligned `new` as before;
// a huge array's mapping is its size rounded up to 2 MiB. Owned, movable, not copyable.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace rocesw {

inline constexpr size_t kHugePage = size_t(2) << 20;
inline constexpr size_t kHugeArrayMin = size_t(512) << 10;

template <class T>
class HugeArray {
    static_assert(std::is_trivially_destructible_v<T>);
    static_assert(alignof(T) <= 4096);

  public:
    HugeArray() = default;
    explicit HugeArray(size_t n) : n_(n) {
        size_t bytes = n * sizeof(T);
        if (bytes >= kHugeArrayMin) {
            size_t len = (bytes + kHugePage - 1) & ~(kHugePage - 1);
            // Over-map by one huge page and trim to a 2 MiB-aligned start: mmap aligns to 4 KiB
            // only, and a THP needs an aligned 2 MiB extent inside the mapping.
            void *raw = mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (raw != MAP_FAILED) {
                auto start = reinterpret_cast<uintptr_t>(raw);
                uintptr_t aligned = (start + kHugePage - 1) & ~(kHugePage - 1);
                if (aligned > start) munmap(raw, aligned - start);
                uintptr_t end = start + len + kHugePage;
                if (end > aligned + len) munmap(reinterpret_cast<void *>(aligned + len),
                                                end - (aligned + len));
                map_ = reinterpret_cast<void *>(aligned);
                map_len_ = len;
                madvise(map_, map_len_, MADV_HUGEPAGE);  // EINVAL where THP is compiled out
                p_ = static_cast<T *>(map_);
                std::uninitialized_value_construct_n(p_, n);
                return;
            }
        }
        p_ = new T[n]();
    }
    HugeArray(HugeArray &&o) noexcept { swap(o); }
    HugeArray &operator=(HugeArray &&o) noexcept {
        HugeArray(std::move(o)).swap(*this);
        return *this;
    }
    HugeArray(const HugeArray &) = delete;
    HugeArray &operator=(const HugeArray &) = delete;
    ~HugeArray() {
        if (map_)
            munmap(map_, map_len_);
        else
            delete[] p_;
    }

    T *get() const { return p_; }
    T &operator[](size_t i) const { return p_[i]; }
    size_t size() const { return n_; }
    // True when the array lives in its own 2 MiB-aligned, MADV_HUGEPAGE mapping.
    bool huge_mapped() const { return map_ != nullptr; }

  private:
    void swap(HugeArray &o) noexcept {
        std::swap(p_, o.p_);
        std::swap(n_, o.n_);
        std::swap(map_, o.map_);
        std::swap(map_len_, o.map_len_);
    }

    T *p_ = nullptr;
    size_t n_ = 0;
    void *map_ = nullptr;
    size_t map_len_ = 0;
};

}  // namespace rocesw

// The C ABI over Boost.Bloom's `fast_multiblock32<K>` and `fast_multiblock64<K>` filters, for the peer
// rows in boost.rs. One table of function pointers per (word size, K): each entry is an instantiation
// whose body inlines Boost's code, so a lookup costs one indirect call from Rust and Boost's own path.
// The hash handed in is ours (a 64-bit xxh3 of the key); Boost is told it avalanches, so it uses it as is.
// Built by build.rs with the cc crate against the headers of the boost_bloom crate, with the flags Boost's
// benchmarks use (-O3 -march=native), which select its AVX2 kernels where the CPU has them. Its memory
// comes from Rust's global allocator, so the harness counts it.

#include <boost/bloom/fast_multiblock32.hpp>
#include <boost/bloom/fast_multiblock64.hpp>
#include <boost/bloom/filter.hpp>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

// Rust's global allocator (boost.rs), so that the filter's bytes are counted like every other row's.
extern "C" void* dedupbench_boost_alloc(std::size_t size, std::size_t align) noexcept;
extern "C" void dedupbench_boost_dealloc(void* ptr, std::size_t size, std::size_t align) noexcept;

namespace {

template <class T>
struct rust_allocator {
  using value_type = T;
  rust_allocator() noexcept = default;
  template <class U>
  rust_allocator(const rust_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    void* p = dedupbench_boost_alloc(n * sizeof(T), alignof(T));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept { dedupbench_boost_dealloc(p, n * sizeof(T), alignof(T)); }
  friend bool operator==(const rust_allocator&, const rust_allocator&) noexcept { return true; }
  friend bool operator!=(const rust_allocator&, const rust_allocator&) noexcept { return false; }
};

struct avalanching_identity {
  using is_avalanching = void;
  std::size_t operator()(std::uint64_t x) const noexcept { return static_cast<std::size_t>(x); }
};

template <class Subfilter>
using filter_t =
    boost::bloom::filter<std::uint64_t, 1, Subfilter, 0, avalanching_identity, rust_allocator<unsigned char>>;

template <class Subfilter>
struct ops {
  using F = filter_t<Subfilter>;
  static void* create(std::size_t n, double fpr) noexcept {
    void* memory = dedupbench_boost_alloc(sizeof(F), alignof(F));
    if (memory == nullptr) return nullptr;
    try {
      return new (memory) F(n, fpr);
    } catch (...) {
      dedupbench_boost_dealloc(memory, sizeof(F), alignof(F));
      return nullptr;
    }
  }
  static void destroy(void* f) noexcept {
    static_cast<F*>(f)->~F();
    dedupbench_boost_dealloc(f, sizeof(F), alignof(F));
  }
  static bool insert_new(void* f, std::uint64_t h) noexcept {
    auto& filter = *static_cast<F*>(f);
    bool seen = filter.may_contain(h);
    filter.insert(h);
    return !seen;
  }
  // The batch paths: the loop a Boost user writes, over (h1, h2) pairs of which Boost takes h1 (1.89
  // has no bulk API of its own).
  static std::size_t insert_many(void* f, const std::uint64_t* pairs, std::size_t n) noexcept {
    std::size_t new_keys = 0;
    for (std::size_t i = 0; i < n; ++i) new_keys += insert_new(f, pairs[2 * i]);
    return new_keys;
  }
  static std::size_t contains_many(const void* f, const std::uint64_t* pairs, std::size_t n) noexcept {
    const auto& filter = *static_cast<const F*>(f);
    std::size_t found = 0;
    for (std::size_t i = 0; i < n; ++i) found += filter.may_contain(pairs[2 * i]);
    return found;
  }
  static bool contains(const void* f, std::uint64_t h) noexcept {
    return static_cast<const F*>(f)->may_contain(h);
  }
  static std::size_t capacity(const void* f) noexcept { return static_cast<const F*>(f)->capacity(); }
  static std::size_t capacity_for(std::size_t n, double fpr) noexcept { return F::capacity_for(n, fpr); }
  static double fpr_for(std::size_t n, std::size_t m) noexcept { return F::fpr_for(n, m); }
};

}  // namespace

extern "C" {

struct dedupbench_boost_ops {
  void* (*create)(std::size_t, double);
  void (*destroy)(void*);
  bool (*insert_new)(void*, std::uint64_t);
  bool (*contains)(const void*, std::uint64_t);
  std::size_t (*insert_many)(void*, const std::uint64_t*, std::size_t);
  std::size_t (*contains_many)(const void*, const std::uint64_t*, std::size_t);
  std::size_t (*capacity)(const void*);
  std::size_t (*capacity_for)(std::size_t, double);
  double (*fpr_for)(std::size_t, std::size_t);
};

// The largest K instantiated.
constexpr int DEDUPBENCH_BOOST_MAX_K = 24;

int dedupbench_boost_max_k() noexcept { return DEDUPBENCH_BOOST_MAX_K; }

// Fills `out` for `fast_multiblock{word_bits}<k>`; false for a word size or K not instantiated.
bool dedupbench_boost_ops_for(int word_bits, int k, dedupbench_boost_ops* out) noexcept {
  return [&]<std::size_t... Ks>(std::index_sequence<Ks...>) {
    auto fill = [&]<class O>(std::type_identity<O>) {
      *out = {O::create, O::destroy, O::insert_new, O::contains, O::insert_many, O::contains_many, O::capacity, O::capacity_for, O::fpr_for};
      return true;
    };
    auto one = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
      if (word_bits == 32) return fill(std::type_identity<ops<boost::bloom::fast_multiblock32<K>>>{});
      if (word_bits == 64) return fill(std::type_identity<ops<boost::bloom::fast_multiblock64<K>>>{});
      return false;
    };
    return ((static_cast<int>(Ks) + 1 == k && one(std::integral_constant<std::size_t, Ks + 1>{})) || ...);
  }(std::make_index_sequence<DEDUPBENCH_BOOST_MAX_K>{});
}

const char* dedupbench_boost_simd() noexcept {
#if defined(BOOST_BLOOM_AVX2)
  return "AVX2";
#elif defined(BOOST_BLOOM_SSE2)
  return "SSE2";
#else
  return "portable";
#endif
}
}

// Independent oracle for birsim's host generator (fidelity: seed 000 §5.4, re-facts §7):
// prints std::mt19937_64 seeded 42 raw outputs, then std::uniform_int_distribution<uint32_t>
// over [0, 0xFFFFFFFF] draws on a fresh std::mt19937_64(42), then the same with seed 7 after
// a reseed.
//
// The reference binary holds libstdc++'s fallback rejection bound 0xFFFFFFFF00000000 (re-facts
// §7): redraw while y >= 2^32 * (2^32 - 1), return y / (2^32 - 1). libstdc++ from GCC 11 on takes
// Lemire's path instead when unsigned __int128 exists (it returns y >> 32), so build with that
// macro undefined to run libstdc++'s own fallback code:
//   g++ -O2 -U__SIZEOF_INT128__ -o mt19937 mt19937.cpp && ./mt19937 > ../data/mt19937_64.txt
#include <cstdint>
#include <cstdio>
#include <random>

#ifdef __SIZEOF_INT128__
#error "build with -U__SIZEOF_INT128__ (see above)"
#endif

int main() {
    const int n = 10000;
    std::mt19937_64 raw(42);
    std::printf("# raw std::mt19937_64(42), %d outputs\n", n);
    for (int i = 0; i < n; ++i) std::printf("%llu\n", (unsigned long long)raw());
    std::mt19937_64 eng(42);
    std::uniform_int_distribution<uint32_t> dist(0, 0xFFFFFFFFu);
    std::printf("# uniform_int_distribution<uint32_t>(0, 0xFFFFFFFF) on mt19937_64(42), %d draws\n", n);
    for (int i = 0; i < n; ++i) std::printf("%u\n", (unsigned)dist(eng));
    eng.seed(7);
    std::printf("# after seed(7), %d draws\n", n);
    for (int i = 0; i < n; ++i) std::printf("%u\n", (unsigned)dist(eng));
    return 0;
}

// Prints std::mt19937_64 draws for the datamove oracle (make_cases.py compiles and runs this with g++).
//   mode "raw":     N raw 64-bit outputs of std::mt19937_64(seed), one decimal per line
//   mode "uniform": N draws of std::uniform_int_distribution<uint32_t>(0, 0xFFFFFFFF) on a fresh
//                   std::mt19937_64(seed), one decimal per line
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s raw|uniform SEED N\n", argv[0]);
        return 2;
    }
    const unsigned long long seed = std::strtoull(argv[2], nullptr, 10);
    const long n = std::strtol(argv[3], nullptr, 10);
    std::mt19937_64 eng(seed);
    if (std::strcmp(argv[1], "raw") == 0) {
        for (long i = 0; i < n; ++i) std::printf("%llu\n", (unsigned long long)eng());
    } else if (std::strcmp(argv[1], "uniform") == 0) {
        std::uniform_int_distribution<std::uint32_t> dist(0, 0xFFFFFFFFu);
        for (long i = 0; i < n; ++i) std::printf("%u\n", (unsigned)dist(eng));
    } else {
        return 2;
    }
    return 0;
}

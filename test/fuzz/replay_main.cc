// Runs a fuzz target without libFuzzer (any compiler, part of the normal suite):
//   1. every file under the given directories/files (kept crashers and seeds), then
//   2. N deterministic mutations (bit flips, truncations, byte insertions) of those inputs.
// Usage: <target> [--mutations N] [--seed S] PATH...
// With FUZZ_LAST_INPUT=FILE set, each mutated input is written to FILE before it runs.
// A pcap file among the inputs contributes each of its frames as a separate input.
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;
using Input = std::vector<uint8_t>;

static void add_pcap_frames(const Input &f, std::vector<Input> &out) {
    if (f.size() < 24) return;
    uint32_t magic;
    std::memcpy(&magic, f.data(), 4);
    bool swap = magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1;
    auto rd = [&](size_t o) {
        uint32_t v;
        std::memcpy(&v, &f[o], 4);
        return swap ? __builtin_bswap32(v) : v;
    };
    for (size_t o = 24; o + 16 <= f.size();) {
        uint32_t incl = rd(o + 8);
        if (o + 16 + incl > f.size()) break;
        out.emplace_back(f.begin() + long(o + 16), f.begin() + long(o + 16 + incl));
        o += 16 + incl;
    }
}

static void add_path(const fs::path &p, std::vector<Input> &out) {
    if (fs::is_directory(p)) {
        for (const auto &e : fs::recursive_directory_iterator(p))
            if (e.is_regular_file()) add_path(e.path(), out);
        return;
    }
    std::ifstream in(p, std::ios::binary);
    Input f((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    uint32_t magic = 0;
    if (f.size() >= 4) std::memcpy(&magic, f.data(), 4);
    if (p.extension() == ".pcap" && (magic == 0xa1b2c3d4 || magic == 0xd4c3b2a1 ||
                                     magic == 0xa1b23c4d || magic == 0x4d3cb2a1))
        add_pcap_frames(f, out);
    else
        out.push_back(std::move(f));
}

int main(int argc, char **argv) {
    uint64_t mutations = 20000, seed = 1;
    const char *last_input = std::getenv("FUZZ_LAST_INPUT");
    std::vector<Input> corpus;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--mutations") && i + 1 < argc) mutations = std::stoull(argv[++i]);
        else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) seed = std::stoull(argv[++i]);
        else add_path(argv[i], corpus);
    }
    if (corpus.empty()) corpus.push_back({});
    for (const auto &in : corpus) LLVMFuzzerTestOneInput(in.data(), in.size());
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    auto rnd = [&] {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    };
    for (uint64_t n = 0; n < mutations; n++) {
        Input in = corpus[rnd() % corpus.size()];
        int edits = 1 + int(rnd() % 4);
        for (int e = 0; e < edits; e++) {
            switch (rnd() % 4) {
                case 0:
                    if (!in.empty()) in[rnd() % in.size()] ^= uint8_t(1u << (rnd() % 8));
                    break;
                case 1:
                    if (!in.empty()) in.resize(rnd() % in.size());
                    break;
                case 2:
                    in.insert(in.begin() + long(in.empty() ? 0 : rnd() % in.size()), uint8_t(rnd()));
                    break;
                case 3:
                    if (!in.empty()) in[rnd() % in.size()] = uint8_t(rnd());
                    break;
            }
        }
        if (last_input) {
            // Debug aid: keeps the input being run, so a crash or hang can be kept as a file.
            std::ofstream(last_input, std::ios::binary | std::ios::trunc)
                .write(reinterpret_cast<const char *>(in.data()), long(in.size()));
        }
        LLVMFuzzerTestOneInput(in.data(), in.size());
    }
    std::printf("%zu inputs and %llu mutations: no failure\n", corpus.size(),
                static_cast<unsigned long long>(mutations));
    return 0;
}

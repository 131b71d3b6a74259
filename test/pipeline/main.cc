// EAL is initialised once per test binary, without hugepages or PCI, with a file prefix of
// its own so that concurrent runs do not collide.
#include <gtest/gtest.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/tsan_mempool.h"

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    std::string prefix = "--file-prefix=rocesw-pipe-" + std::to_string(getpid());
    std::vector<std::string> args = {"pipeline_tests",
                                     "--no-huge",
                                     "--no-pci",
                                     "-m",
                                     "1024",
                                     "-l",
                                     "0",
                                     prefix,
                                     "--log-level=lib.eal:error",
                                     "--no-telemetry"};
#ifdef ROCESW_TSAN
    if (const char *a = rocesw::test::tsan_mempool::eal_arg()) args.push_back(a);
#endif
    std::vector<char *> av;
    for (auto &a : args) av.push_back(a.data());
    if (rte_eal_init(int(av.size()), av.data()) < 0) {
        fprintf(stderr, "rte_eal_init failed: %s\n", rte_strerror(rte_errno));
        return 1;
    }
    int rc = RUN_ALL_TESTS();
    std::string runtime_dir = rte_eal_get_runtime_dir();  // this process's own directory
    rte_eal_cleanup();
    std::error_code ec;
    std::filesystem::remove_all(runtime_dir, ec);
    return rc;
}

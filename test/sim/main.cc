// The engine tests need EAL (mbufs, rte_fib, rings): initialised once for the binary, the way
// rocesim does it (--no-huge --no-pci, a file prefix of its own).
#include <gtest/gtest.h>

#include "sim/engine.h"

int main(int argc, char **argv) {
    ::testing::InitGoogleTest(&argc, argv);
    if (!rocesw::sim::sim_eal_init("sim_engine_tests", 2048)) return 1;
    int rc = RUN_ALL_TESTS();
    rocesw::sim::sim_eal_cleanup();
    return rc;
}

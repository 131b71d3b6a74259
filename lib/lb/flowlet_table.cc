#include "lb/flowlet_table.h"

namespace rocesw {

FlowletTable::FlowletTable(uint32_t entries) {
    uint32_t n = 1;
    while (n * 4 < entries) n <<= 1;
    buckets_ = HugeArray<FlowletBucket>(n);  // one bucket per cache line
    mask_ = n - 1;
}

}  // namespace rocesw

#!/usr/bin/python3
"""Reference values of rocesw's crc32c flow hash (lib/lb/flow_hash.h, doc/load-balancing.md "The
flow hash") for FlowHash.Crc32cValuesArePinned in test/unit/lb_group_test.cc, from a bitwise
CRC32C written here (reflected polynomial 0x82F63B78, no pre/post inversion: the crc32
instruction's step), independent of DPDK's rte_hash_crc. Prints the `want` table:
`/usr/bin/python3 test/unit/flow_hash_ref.py`. With --quality, the bucket collision counts the
doc quotes for crc32c and mix64.
"""
import struct
import sys

M64 = 2**64 - 1


def crc32c(crc, data):
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc


def crc8(word, crc):  # rte_hash_crc_8byte: one crc32q over the word's little-endian bytes
    return crc32c(crc, struct.pack("<Q", word & M64))


def flow_key(f, l3, symmetric, dest_qp):
    if f["v6"]:
        a, b = list(struct.unpack("<QQ", l3[8:24])), list(struct.unpack("<QQ", l3[24:40]))
    else:
        a, b = [f["src"], 0], [f["dst"], 0]
    l4 = f["flags"] & 1  # kFlagL4
    sp, dp = (f["sport"], f["dport"]) if l4 else (0, 0)
    if symmetric:
        swap = a[0] > b[0] if a[0] != b[0] else a[1] > b[1] if a[1] != b[1] else sp > dp
        if swap:
            a, b, sp, dp = b, a, dp, sp
    ports = sp << 48 | dp << 32 | f["proto"] << 24
    if dest_qp and f["flags"] & 2:  # kFlagRoce
        ports |= f["qp"] & 0xFFFFFF
    return a, b, ports


def crc32c_hash(f, l3, seed, symmetric=False, dest_qp=False):
    a, b, ports = flow_key(f, l3, symmetric, dest_qp)
    lo, hi = seed & 0xFFFFFFFF, ((seed >> 32) ^ 0x9E3779B9) & 0xFFFFFFFF
    words = [a[0], a[1], b[0], b[1], ports] if f["v6"] else [a[0] << 32 | b[0], ports]
    for w in words:
        lo = crc8(w, lo)
    for w in reversed(words):
        hi = crc8(w, hi)
    return hi << 32 | lo


def mix(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & M64
    return k ^ (k >> 33)


def mix64_hash_v4(f, seed):
    a, b, ports = flow_key(f, b"", False, False)
    h = mix(seed ^ a[0])
    h = mix(h ^ ((b[0] + 0x9E3779B97F4A7C15) & M64))
    return mix(h ^ ports)


def v4(a, b, c, d):
    return a << 24 | b << 16 | c << 8 | d


# The standard check value: CRC32C("123456789") with the usual inversions.
assert crc32c(0xFFFFFFFF, b"123456789") ^ 0xFFFFFFFF == 0xE3069283

m = dict(v6=False, src=0x0A000002, dst=0x0A630001, sport=49152, dport=4791, proto=17,
         qp=0x123456, flags=3)
flows = [m, dict(m, src=0x0A630001, dst=0x0A000002, sport=4791, dport=49152),
         dict(m, flags=0), dict(m, v6=True)]
l3 = bytes((i * 7 + 1) & 0xFF for i in range(40))

if "--quality" not in sys.argv:
    for f in flows:
        vals = [crc32c_hash(f, l3, 0x5EED, bool(pc & 1), bool(pc & 2)) for pc in range(4)]
        print("        {" + ", ".join("0x%016xull" % v for v in vals) + "},")
    sys.exit(0)

base = dict(v6=False, src=v4(10, 0, 0, 2), dport=4791, proto=17, qp=0, flags=1)
sets = {
    "source port only": [dict(base, dst=v4(10, 99, 0, 1), sport=49152 + i) for i in range(1024)],
    "M1 (address and port)": [dict(base, dst=v4(10, 99, i // 200, i % 200 + 1),
                                   sport=(1000 + i * 7) & 0xFFFF) for i in range(1024)],
}
for name, fs in sets.items():
    for fn, h in (("crc32c", lambda f: crc32c_hash(f, b"", 0x5EED)),
                  ("mix64", lambda f: mix64_hash_v4(f, 0x5EED))):
        print(f"{name}: {fn}: {len({h(f) & 4095 for f in fs})} of 4096 buckets for {len(fs)} flows")

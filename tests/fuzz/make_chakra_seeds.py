#!/usr/bin/env python3
"""Writes the seeds of fuzz_chakra (tests/fuzz/corpus/chakra) with the standard library alone:
protobuf's wire format by hand (docs/chakra.md "The schema"). Each seed is a split byte and then
the files of rank 0 and rank 1, one after the other.

Usage: tests/fuzz/make_chakra_seeds.py [DIR]  (default: tests/fuzz/corpus/chakra beside it)
"""
import os
import sys


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, wire, payload):
    return varint(number << 3 | wire) + payload


def vint(number, value):
    return field(number, 0, varint(value))


def ldelim(number, data):
    return field(number, 2, varint(len(data)) + data)


def attr_int(name, value):  # AttributeProto: name = 1, int64_val = 9
    return ldelim(10, ldelim(1, name.encode()) + vint(9, value))


def attr_str(name, value):  # string_val = 29
    return ldelim(10, ldelim(1, name.encode()) + ldelim(29, value.encode()))


def node(id_, type_, deps=(), micros=0, attrs=b""):
    body = vint(1, id_) + ldelim(2, b"n") + vint(3, type_)
    for d in deps:
        body += vint(5, d)  # data_deps, unpacked
    if micros:
        body += vint(7, micros)
    return body + attrs


def trace(nodes):
    out = bytearray()
    for message in [ldelim(1, b"0.0.4")] + list(nodes):  # GlobalMetadata, then the nodes
        out += varint(len(message)) + message
    return bytes(out)


COMP, SEND, RECV, COLL = 4, 5, 6, 7
ALL_REDUCE, ALL_GATHER = 0, 2


def coll(id_, kind, size, deps=(), group=None):
    attrs = attr_int("comm_type", kind) + attr_int("comm_size", size)
    if group is not None:
        attrs += attr_str("pg_name", group)
    return node(id_, COLL, deps, attrs=attrs)


def seeds():
    both = [node(0, COMP, micros=100), coll(1, ALL_REDUCE, 1 << 20, [0])]
    yield "compute_all_reduce", trace(both), trace(both)
    p2p0 = [node(0, COMP, micros=5),
            node(1, SEND, [0], attrs=attr_int("comm_dst", 1) + attr_int("comm_size", 4096))]
    p2p1 = [node(0, RECV, attrs=attr_int("comm_src", 0) + attr_int("comm_size", 4096)),
            node(1, COMP, [0], micros=5)]
    yield "send_recv", trace(p2p0), trace(p2p1)
    grouped = [coll(0, ALL_GATHER, 65536, group="tp"), coll(1, ALL_REDUCE, 8, [0])]
    yield "groups", trace(grouped), trace(grouped)
    flops = [node(0, COMP, attrs=attr_int("num_ops", 10**12)), node(1, COMP, [0], micros=1)]
    yield "flops", trace(flops), trace([node(0, COMP, micros=3)])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus", "chakra")
    os.makedirs(out, exist_ok=True)
    for name, rank0, rank1 in seeds():
        total = len(rank0) + len(rank1)
        # The target splits at len(rest) * data[0] // 255: the smallest byte that reaches rank0.
        split = next(b for b in range(256) if total * b // 255 >= len(rank0))
        if total * split // 255 != len(rank0):
            raise SystemExit(f"{name}: no split byte lands on {len(rank0)} of {total}")
        with open(os.path.join(out, name), "wb") as f:
            f.write(bytes([split]) + rank0 + rank1)


if __name__ == "__main__":
    main()

package dev.lantern.bench.report;

/** One allocator sample of a soak's timeline: seconds in, bytes reserved and allocated, fragmentation %. */
public record TimelinePoint(double seconds, double reservedBytes, double allocatedBytes, double fragPct) {}

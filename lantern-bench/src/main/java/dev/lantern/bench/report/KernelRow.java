package dev.lantern.bench.report;

/**
 * One row of a kernel table: a step (or kernel) of one benchmark's forward with its time and, where
 * the file has them ({@code kernel_figures}), theoretical occupancy and DRAM GB/s (NaN otherwise).
 */
public record KernelRow(String caseName, String impl, String op, double ms, double occupancyPct, double dramGbps) {}

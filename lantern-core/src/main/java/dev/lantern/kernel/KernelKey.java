package dev.lantern.kernel;

import dev.lantern.ir.GraphHash;

import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What a compiled kernel depends on, and so the key under which a binary is cached: target
 * architecture, operand dtypes and layouts, tile, specialization constants (shapes, flags,
 * epsilon...), the hash of the kernel's source (for the CPU: its canonical op text; for CUDA: the
 * generated C) and the versions of the compilers that build it. {@link #hash()} is SHA-256 of
 * {@link #canonical()}, a text with every map sorted, so the same kernel gives the same key on
 * every JVM and machine of the same architecture.
 */
public record KernelKey(String arch, List<String> dtypes, List<String> layouts, Tile tile,
                        SortedMap<String, String> specialization, String sourceHash,
                        SortedMap<String, String> compilerVersions) {
    public KernelKey {
        dtypes = List.copyOf(dtypes);
        layouts = List.copyOf(layouts);
        specialization = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(specialization));
        compilerVersions = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(compilerVersions));
    }

    /** One line, fields in a fixed order: the text that is hashed. */
    public String canonical() {
        return "arch=" + arch + ";dtypes=" + dtypes + ";layouts=" + layouts + ";tile=" + tile
                + ";spec=" + specialization + ";source=" + sourceHash + ";compilers=" + compilerVersions;
    }

    /** SHA-256 (hex) of {@link #canonical()}. */
    public String hash() {
        return GraphHash.sha256(canonical());
    }

    /** The first 16 hex digits of the hash, as dumps print it. */
    public String shortHash() {
        return hash().substring(0, 16);
    }
}

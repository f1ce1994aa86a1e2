package dev.lantern.cli;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;

/**
 * Bad cases for {@link JniScan} (read as a class file by JniScanTest, never run): a native method and
 * both ways of loading a JNI library. {@link Ffm} reaches a library through the FFM API, which the
 * scan allows.
 */
final class JniFixture {
    private JniFixture() {}

    native int nativeAdd(int a, int b);

    static void load() {
        System.loadLibrary("lantern-fixture");
    }

    static void loadByPath() {
        Runtime.getRuntime().load("/nonexistent/liblantern-fixture.so");
    }

    /** The allowed way: an FFM symbol lookup. */
    static final class Ffm {
        private Ffm() {}

        static boolean lookUp() {
            return SymbolLookup.libraryLookup("libc.so.6", Arena.global()).find("strlen").isPresent();
        }
    }
}

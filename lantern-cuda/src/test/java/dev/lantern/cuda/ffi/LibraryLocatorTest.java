package dev.lantern.cuda.ffi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LibraryLocatorTest {
    @TempDir
    Path tmp;

    @Test
    void missingLibraryIsReportedWithEveryPlaceLooked() throws Exception {
        Path fake = Files.createDirectories(tmp.resolve("no-cuda-here"));
        Path other = Files.createDirectories(tmp.resolve("also-empty"));
        LibraryLocator locator = new LibraryLocator(List.of(fake), List.of(other), false);

        LibraryLocator.Located located = locator.locate("driver", CudaLibraries.DRIVER_NAMES);

        LibraryProbe probe = located.probe();
        assertFalse(probe.found());
        assertTrue(located.lookup().isEmpty());
        assertNull(probe.foundAt());
        assertEquals(List.of(fake.toString(), other.toString()), probe.lookedIn());
        assertTrue(probe.summary().startsWith("driver: not found (libcuda.so.1 or libcuda.so; looked in "),
                probe.summary());
        assertTrue(probe.summary().contains(fake.toString()));
    }

    @Test
    void aFileThatIsNotALibraryIsRecordedAsAFailureAndSkipped() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("bogus"));
        Files.write(dir.resolve("libnvrtc.so.13"), new byte[] {1, 2, 3, 4});
        LibraryLocator locator = new LibraryLocator(List.of(dir), List.of(), false);

        LibraryProbe probe = locator.locate("nvrtc", CudaLibraries.NVRTC_NAMES).probe();

        assertFalse(probe.found());
        assertEquals(1, probe.failures().size());
        assertTrue(probe.failures().get(0).startsWith(dir.resolve("libnvrtc.so.13").toString()));
        assertTrue(probe.summary().contains("failed to load"), probe.summary());
    }

    @Test
    void environmentOrderIsUserPathsThenSystemThenLoader() {
        Path fake = tmp.resolve("fake-libs");
        LibraryLocator locator = LibraryLocator.fromEnvironment(
                Map.of(LibraryLocator.ENV, fake + ":" + tmp.resolve("second"), "HOME", tmp.toString()));
        // Use a name no machine has, so that the loader default cannot succeed either.
        LibraryProbe probe = locator.locate("none", List.of("liblantern-does-not-exist.so.99")).probe();

        assertFalse(probe.found());
        List<String> looked = probe.lookedIn();
        assertEquals(fake.toString(), looked.get(0));
        assertEquals(tmp.resolve("second").toString(), looked.get(1));
        assertEquals(LibraryLocator.SYSTEM_DIRS.get(0).toString(), looked.get(2));
        assertEquals(LibraryLocator.LOADER_DEFAULT, looked.get(looked.size() - 1));
    }

    @Test
    void pythonWheelFoldersAreSearched() throws Exception {
        Path venv = tmp.resolve("venv");
        Path nvrtcLib = Files.createDirectories(venv.resolve("lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib"));
        Files.createDirectories(venv.resolve("lib/python3.12/site-packages/nvidia/cublas/lib"));
        List<Path> dirs = LibraryLocator.pythonNvidiaLibDirs(Map.of("VIRTUAL_ENV", venv.toString()));
        assertTrue(dirs.contains(nvrtcLib), dirs.toString());
        assertTrue(dirs.indexOf(venv.resolve("lib/python3.12/site-packages/nvidia/cublas/lib"))
                < dirs.indexOf(nvrtcLib), "sorted: cublas before cuda_nvrtc");
    }

    @Test
    void missingLibraryThrowsUnavailableWithTheProbe() throws Exception {
        CudaLibraries libs = new CudaLibraries(new LibraryLocator(List.of(tmp), List.of(), false));
        CudaUnavailableException e = assertThrows(CudaUnavailableException.class, libs::driver);
        assertTrue(e.getMessage().contains("driver: not found"), e.getMessage());
        // asked twice, answered the same without probing again
        assertEquals(e.getMessage(), assertThrows(CudaUnavailableException.class, libs::driver).getMessage());
        assertFalse(libs.nvtx().enabled(), "NVTX is optional: missing means no-op");
        assertEquals(4, libs.probes().size());
    }
}

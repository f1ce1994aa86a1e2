package dev.lantern.cuda.doctor;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.ffi.CudaLibraries;
import dev.lantern.cuda.ffi.LibraryLocator;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CudaDoctorTest {
    @TempDir
    Path tmp;

    @Test
    void noDriverGivesClearLinesNotAnException() {
        CudaLibraries libs = new CudaLibraries(new LibraryLocator(List.of(tmp), List.of(), false));
        List<String> lines = CudaDoctor.report(libs);
        String all = String.join("\n", lines);
        assertTrue(all.contains("cuda lib driver: not found"), all);
        assertTrue(all.contains("cuda lib nvrtc: not found"), all);
        assertTrue(all.contains("generated kernels cannot be compiled"), all);
        assertTrue(all.contains("cuda lib cublasLt: not found"), all);
        assertTrue(all.contains("nvtx: not found") && all.contains("optional"), all);
        assertTrue(all.contains("no NVIDIA driver"), all);
        assertTrue(all.contains(tmp.toString()), "says where it looked: " + all);
    }

    @Test
    void systemReportNeverThrows() {
        // On a machine without a GPU this reports "not found"; with one, the GPUs. Either way, lines.
        List<String> lines = CudaDoctor.report();
        assertTrue(lines.size() >= 4, lines.toString());
    }
}

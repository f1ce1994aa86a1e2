package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.doctor.CudaDoctor;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("gpu")
class DoctorGpuTest {
    @Test
    void reportsLibrariesDriverAndGpu() {
        List<String> lines = CudaDoctor.report();
        lines.forEach(l -> System.out.println("[doctor] " + l));
        String all = String.join("\n", lines);
        assertTrue(all.contains("cuda lib driver: found"), all);
        assertTrue(all.contains("cuda lib nvrtc: found"), all);
        assertTrue(all.contains("cuda lib cublasLt: found"), all);
        assertTrue(all.contains("cuda driver: "), all);
        assertTrue(all.contains("gpu 0: ") && all.contains("sm_"), all);
        assertTrue(all.contains("nvrtc version: "), all);
    }
}

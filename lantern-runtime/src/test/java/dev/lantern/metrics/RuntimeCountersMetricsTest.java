package dev.lantern.metrics;

import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.engine.CompiledModel;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.tensor.Tensor;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * kernel_launches_total, compiles_total and compile_cache_hits_total as a CPU program and its
 * sessions move them, with no recording call: the compiler, the program's cache and the executors
 * count into {@link dev.lantern.trace.RuntimeCounters}, which the counters read when scraped. Exact
 * counts, so a counter left unwired (or counting twice) fails.
 */
class RuntimeCountersMetricsTest {
    @Test
    void aCpuProgramsCompilesCacheHitsAndLaunchesAreScraped() throws Exception {
        LanternMetrics m = new LanternMetrics(new PrometheusRegistry());
        Graph g = IrParser.parse(Files.readString(Path.of("../examples/mlp-softmax.ir")));
        Weights w = Weights.random(11);
        try (MetricsServer srv = MetricsServer.start("127.0.0.1", 0, m.registry())) {
            Program p = Lantern.compile(g); // compiles its CPU kernels now
            CompiledModel model = p.model();
            int kernels = model.kernels().size();
            long nonEmpty = model.kernels().stream().filter(k -> k.output().shape().numel() > 0).count();
            assertTrue(kernels >= 2, "mlp-softmax compiles to several kernels: " + kernels);
            String body = Scrape.get(srv.url()).body();
            assertEquals(kernels, Scrape.value(body, "compiles_total"), body);
            assertEquals(0, Scrape.value(body, "compile_cache_hits_total"), body);
            assertEquals(0, Scrape.value(body, "kernel_launches_total"), body);

            Map<String, Tensor> in = p.randomInputs(12);
            try (Session s = p.load(Device.cpu(), w)) { // the program had them compiled: every kernel a hit
                for (int i = 0; i < 5; i++) {
                    s.run(in);
                }
            }
            body = Scrape.get(srv.url()).body();
            assertEquals(kernels, Scrape.value(body, "compiles_total"), "a session of a compiled program compiles nothing: " + body);
            assertEquals(kernels, Scrape.value(body, "compile_cache_hits_total"), body);
            assertEquals(5 * nonEmpty, Scrape.value(body, "kernel_launches_total"), "one launch per kernel per forward: " + body);

            try (Session s = p.load(Device.cpu(), w, RunMode.EAGER)) { // the unfused graph: compiled now, run op by op
                s.run(in);
                s.run(in);
            }
            int eagerKernels = p.model("cpu", false).kernels().size();
            body = Scrape.get(srv.url()).body();
            assertEquals(kernels + eagerKernels, Scrape.value(body, "compiles_total"), body);
            assertEquals(kernels, Scrape.value(body, "compile_cache_hits_total"), body);
            double eagerLaunches = Scrape.value(body, "kernel_launches_total") - 5 * nonEmpty;
            // an eager forward launches one kernel per op: at least as many as the fused plan's kernels, the same each forward
            assertTrue(eagerLaunches >= 2 * nonEmpty && eagerLaunches % 2 == 0, "two eager forwards launched " + eagerLaunches + ": " + body);
        }
        // a second LanternMetrics starts from 0: it counts what happens while it exists
        LanternMetrics later = new LanternMetrics(new PrometheusRegistry());
        try (MetricsServer srv = MetricsServer.start("127.0.0.1", 0, later.registry())) {
            String body = Scrape.get(srv.url()).body();
            assertEquals(0, Scrape.value(body, "kernel_launches_total"), body);
            assertEquals(0, Scrape.value(body, "compiles_total"), body);
        }
    }
}

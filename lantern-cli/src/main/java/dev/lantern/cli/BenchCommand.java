package dev.lantern.cli;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cli.cuda.CudaBench;
import dev.lantern.cuda.engine.TuneCache;
import dev.lantern.frontend.nn.BlockConfig;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * {@code lantern bench macro --config decoder|encoder|decoder-small [--device cuda] [--json]}
 * and {@code lantern bench micro [--device cuda] [--json]}: GPU benchmarks, one record per
 * figure in torch_ref.py's form ({@code case}, {@code impl}, {@code ms}, {@code tflops} or
 * {@code gbps}, {@code peak_mib}). {@code --device} defaults to cuda; without a GPU the command
 * fails with one line and exit status 2. Progress goes to the terminal only.
 */
final class BenchCommand {
    private BenchCommand() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        Args a = Args.parse("bench", argv, Set.of("json", "no-tune"), Set.of("config", "shape", "device", "seed"));
        List<String> what = a.positional();
        if (what.size() != 1 || !(what.getFirst().equals("macro") || what.getFirst().equals("micro"))) {
            throw new UsageException("bench: expected 'macro --config NAME|--shape B,S,H,N,M' or 'micro' [--device cuda] [--json]");
        }
        String device = a.get("device", "cuda");
        if (!device.equals("cuda")) {
            throw new UsageException("bench: --device takes cuda (the CPU figures are ./lantern demo's), found '" + device + "'");
        }
        List<BlockConfig> configs = new ArrayList<>();
        if (what.getFirst().equals("macro")) {
            if (a.get("shape", null) != null) {
                configs.add(BlockOption.of("bench", a.get("config", null), a.get("shape", null)));
            } else {
                String names = a.get("config", "decoder-small");
                for (String n : names.split(",")) {
                    configs.add(UsageException.option("bench", () -> BlockConfig.named(n.trim())));
                }
            }
        } else {
            for (String macroOnly : List.of("config", "shape", "seed")) {
                if (a.get(macroOnly, null) != null) {
                    throw new UsageException("bench: --" + macroOnly + " applies to bench macro only; bench micro runs fixed cases");
                }
            }
        }
        if (CudaDevice.count() < 1) {
            err.println("lantern bench: no CUDA device (driver or GPU not found); bench needs --device cuda");
            return 2;
        }
        boolean json = a.flag("json");
        Consumer<String> emit = json ? out::println : line -> out.println(human(line));
        Consumer<String> progress = System.console() != null ? m -> err.println("[bench] " + m) : m -> { };
        TuneCache tune = a.flag("no-tune") ? TuneCache.none() : new TuneCache(TuneCache.defaultFile());
        long seed = a.getLong("bench", "seed", 42);
        try (CudaDevice dev = CudaDevice.open(0)) {
            CudaBench bench = new CudaBench(dev, emit, progress, tune);
            if (configs.isEmpty()) {
                bench.micro();
            } else {
                for (BlockConfig c : configs) {
                    bench.macro(c, seed);
                }
            }
        }
        return 0;
    }

    /** A record line as text for a terminal: case, impl, ms and the rate. */
    private static String human(String json) {
        return json.replace("{", "").replace("}", "").replace("\"", "");
    }
}

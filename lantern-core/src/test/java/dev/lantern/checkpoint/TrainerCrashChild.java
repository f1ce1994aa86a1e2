package dev.lantern.checkpoint;

import dev.lantern.engine.CompileOptions;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.train.run.LanguageModel;
import dev.lantern.train.run.TrainOptions;
import dev.lantern.train.run.Trainer;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code lantern train}'s loop ({@link Trainer}: the compiled forward and backward, AdamW, the f16
 * loss scaler, the task's stream) as a child for {@link CrashHarness}, speaking {@link ToyTrainer}'s
 * line protocol; the state hash is the weights' hash with the step. A tiny decoder block keeps a
 * life short.
 */
public final class TrainerCrashChild {
    private TrainerCrashChild() {}

    static final BlockConfig BLOCK = BlockConfig.parse("2,16,16,2,32");

    public static void main(String[] args) {
        Map<String, String> a = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--resume")) {
                a.put("resume", "true");
            } else {
                a.put(args[i].substring(2), args[++i]);
            }
        }
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true);
        int every = Integer.parseInt(a.get("checkpoint-every"));
        long steps = Long.parseLong(a.get("steps"));
        TrainOptions o = TrainOptions.defaults().withVocab(16).withAmp(CompileOptions.Amp.F16).withThreads(1);
        CheckpointStore.Options opts = CheckpointStore.Options.defaults().withKeepLast(2)
                .withListener((p, s) -> out.println("phase " + p + " " + s));
        try (CheckpointStore store = CheckpointStore.open(Path.of(a.get("checkpoint-dir")), opts);
             Trainer t = new Trainer(LanguageModel.of(BLOCK, o.vocab(), o.seed()), o)) {
            if (a.containsKey("resume")) {
                try {
                    CheckpointStore.Restored r = store.restoreLatest();
                    r.skipped().forEach(c -> out.println("skipped " + c.step() + " " + c.file()));
                    t.restore(r.checkpoint());
                } catch (CheckpointException e) {
                    if (e.kind() != CheckpointException.Kind.NONE_COMMITTED) {
                        throw e;
                    }
                }
            }
            out.println("start " + t.steps() + " " + t.weightsHash());
            while (t.steps() < steps) {
                t.step();
                if (t.steps() % every == 0) {
                    store.write(t.checkpoint());
                    out.println("checkpoint " + t.steps() + " " + t.weightsHash());
                }
            }
            out.println("done " + t.steps() + " " + t.weightsHash());
        }
        out.flush();
    }
}
